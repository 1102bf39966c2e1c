package io.converge.broker.pulsar;

import io.converge.broker.EmbeddedServerException;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The classpath of the Pulsar child JVM: the {@code converge-pulsar-server} jar (or classes directory)
 * plus the jars listed in its resource {@value #LIST}, written at build time with their paths relative
 * to the local Maven repository. Stateless.
 */
final class ChildClasspath {

  static final String LIST = "io/converge/broker/pulsar/server/classpath.txt";
  private static final String PLACEHOLDER = "@LOCAL_REPO@";

  private ChildClasspath() {
  }

  /**
   * Resolves the classpath against the {@link #localRepository() local Maven repository}.
   *
   * @throws PulsarArtifactMissingException naming the missing artifact and how to get it
   * @throws EmbeddedServerException when converge-pulsar-server itself is not on the classpath
   */
  static String resolve(ClassLoader loader) {
    return resolve(loader, localRepository());
  }

  /** Resolves the classpath against {@code repo}; see {@link #resolve(ClassLoader)}. */
  static String resolve(ClassLoader loader, Path repo) {
    URL list = loader.getResource(LIST);
    if (list == null) {
      throw new EmbeddedServerException("EmbeddedPulsar needs io.converge:converge-pulsar-server on the classpath ("
          + LIST + " not found)");
    }
    List<String> entries = new ArrayList<>();
    entries.add(codeLocation(list).toString());
    String text;
    try (InputStream in = list.openStream()) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new EmbeddedServerException("Cannot read " + list, e);
    }
    for (String entry : text.split(":")) {
      if (entry.isBlank()) {
        continue;
      }
      String relative = entry.trim();
      Path jar = Path.of(relative.replace(PLACEHOLDER, repo.toString()));
      if (!Files.isRegularFile(jar)) {
        throw new PulsarArtifactMissingException(coordinates(relative), jar, repo);
      }
      entries.add(jar.toString());
    }
    return String.join(java.io.File.pathSeparator, entries);
  }

  /**
   * {@code groupId:artifactId:version[:jar:classifier]} of a repository path such as
   * {@code @LOCAL_REPO@/org/rocksdb/rocksdbjni/7.9.2/rocksdbjni-7.9.2.jar}; the path itself if it
   * does not have the repository layout.
   */
  static String coordinates(String entry) {
    String[] parts = entry.replace(PLACEHOLDER + "/", "").split("/");
    if (parts.length < 4) {
      return entry;
    }
    String file = parts[parts.length - 1];
    String version = parts[parts.length - 2];
    String artifactId = parts[parts.length - 3];
    String groupId = String.join(".", Arrays.copyOf(parts, parts.length - 3));
    String gav = groupId + ":" + artifactId + ":" + version;
    String stem = artifactId + "-" + version + "-";
    if (file.startsWith(stem) && file.endsWith(".jar")) {
      return gav + ":jar:" + file.substring(stem.length(), file.length() - ".jar".length());
    }
    return gav;
  }

  /** The local Maven repository: {@code maven.repo.local}, else {@code ~/.m2/repository}. */
  static Path localRepository() {
    String configured = System.getProperty("maven.repo.local");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    return Path.of(System.getProperty("user.home"), ".m2", "repository");
  }

  /** The jar or classes directory that holds {@code resource}. */
  private static Path codeLocation(URL resource) {
    try {
      if ("jar".equals(resource.getProtocol())) {
        JarURLConnection connection = (JarURLConnection) resource.openConnection();
        return Path.of(connection.getJarFileURL().toURI());
      }
      Path file = Path.of(resource.toURI());
      Path root = file;
      for (int i = 0; i < LIST.split("/").length; i++) {
        root = root.getParent();
      }
      return root;
    } catch (IOException | URISyntaxException e) {
      throw new EmbeddedServerException("Cannot locate the converge-pulsar-server code from " + resource, e);
    }
  }
}
