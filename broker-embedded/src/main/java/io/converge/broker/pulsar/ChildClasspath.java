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
import java.util.List;

/**
 * The classpath of the Pulsar child JVM: the {@code converge-pulsar-server} jar (or classes directory)
 * plus the jars listed in its resource {@value #LIST}, written at build time with their paths relative
 * to the local Maven repository. Stateless.
 */
final class ChildClasspath {

  static final String LIST = "io/converge/broker/pulsar/server/classpath.txt";
  private static final String PLACEHOLDER = "@LOCAL_REPO@";

  private ChildClasspath() {}

  /**
   * Resolves the classpath.
   *
   * @throws EmbeddedServerException naming the missing artifact and how to get it
   */
  static String resolve(ClassLoader loader) {
    URL list = loader.getResource(LIST);
    if (list == null) {
      throw new EmbeddedServerException("EmbeddedPulsar needs io.converge:converge-pulsar-server on the classpath ("
          + LIST + " not found)");
    }
    Path repo = localRepository();
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
      Path jar = Path.of(entry.trim().replace(PLACEHOLDER, repo.toString()));
      if (!Files.isRegularFile(jar)) {
        throw new EmbeddedServerException("EmbeddedPulsar: " + jar + " is missing from the local Maven repository "
            + repo + "; resolve the Pulsar broker first, e.g. mvn dependency:resolve in a project depending on "
            + "io.converge:converge-pulsar-server, or set -Dmaven.repo.local to the repository that has it");
      }
      entries.add(jar.toString());
    }
    return String.join(java.io.File.pathSeparator, entries);
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
