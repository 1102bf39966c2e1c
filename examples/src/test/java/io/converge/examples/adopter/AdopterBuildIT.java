package io.converge.examples.adopter;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The outside project: {@code examples/adopter} (not a module of this build) is built and tested by a child
 * Maven, offline, against a temporary local repository holding this build's artifacts (as {@code mvn install}
 * lays them out: each module's pom and jar; the BOM's flattened pom) and, by symbolic links, the third-party
 * artifacts of the build's own local repository, which is never written. The adopter knows Converge only
 * through {@code converge-bom}, {@code converge-spring-boot-starter} and, in test scope, {@code converge-testing}: a
 * dependency the starter does not bring, a class its jars do not contain or a property that does not bind fails its
 * test, and so this one.
 */
class AdopterBuildIT {

  /** This build's modules the adopter resolves: the parent, the BOM, the starter, converge-testing and their deps. */
  private static final List<String> MODULES = List.of(".", "examples/bom", "examples/starter",
      "producer-txn/core", "producer-txn",
      "consumer-idem", "consumer-idem/saga", "outbox-relay", "pulsar-adapter", "broker-embedded",
      "broker-embedded/pulsar-server", "broker-embedded/testing");
  private static final long TIMEOUT_MINUTES = 8;

  private final Path root = Path.of(System.getProperty("user.dir")).getParent().toAbsolutePath();
  private Path work;

  @BeforeEach
  void workDirectory() throws IOException {
    work = Files.createTempDirectory("converge-adopter-");
  }

  @AfterEach
  void deleteWorkDirectory() throws IOException {
    try (Stream<Path> files = Files.walk(work)) {
      // symbolic links are deleted as links: the build's local repository behind them is untouched
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void theAdopterBuildsAndItsServicesPublishAndConsumeOnce() throws Exception {
    Path repo = work.resolve("repository");
    Element parent = pom(root.resolve("pom.xml"));
    String version = text(parent, "version");
    for (String module : MODULES) {
      install(root.resolve(module), repo, version);
    }
    linkThirdParty(Path.of(System.getProperty("maven.repo.local")), repo);
    Path project = work.resolve("shop");
    copyTree(root.resolve("examples/adopter"), project);

    Element properties = child(parent, "properties");
    List<String> command = new ArrayList<>(List.of(mvn(), "-B", "-o", "-q", "-Dmaven.repo.local=" + repo,
        "-Dconverge.version=" + version, "-Dstyle.color=never"));
    for (String p : List.of("spring-boot.version", "junit.version", "compiler-plugin.version",
        "resources-plugin.version", "surefire.version", "jar-plugin.version")) {
      command.add("-D" + p + "=" + text(properties, p));
    }
    command.add("test");
    Path log = work.resolve("mvn.log");
    Process mvn = new ProcessBuilder(command).directory(project.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    if (!mvn.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
      mvn.destroyForcibly();
      throw new AssertionError("the adopter's build ran over " + TIMEOUT_MINUTES + " min:\n" + tail(log));
    }
    assertThat(mvn.exitValue()).as("exit status of %s; its output:%n%s", command, tail(log)).isZero();
    // the two tests ran (not skipped, not filtered away)
    String report = Files
        .readString(project.resolve("target/surefire-reports/TEST-com.example.OrderToInventoryTest.xml"));
    assertThat(report).contains("tests=\"2\"").contains("failures=\"0\"").contains("errors=\"0\"")
        .contains("skipped=\"0\"");
    // and the contract of converge-testing, run against the sink its relay uses
    String contract = Files
        .readString(project.resolve("target/surefire-reports/TEST-com.example.OrderRelaySinkContractTest.xml"));
    assertThat(contract).contains("tests=\"3\"").contains("failures=\"0\"").contains("errors=\"0\"")
        .contains("skipped=\"0\"");
  }

  /** Lays out {@code module}'s artifact under {@code repo} as {@code mvn install} does. */
  private static void install(Path module, Path repo, String version) throws Exception {
    Element pom = pom(module.resolve("pom.xml"));
    String artifactId = text(pom, "artifactId");
    String packaging = child(pom, "packaging") == null ? "jar" : text(pom, "packaging");
    Path dir = repo.resolve("io/converge").resolve(artifactId).resolve(version);
    Files.createDirectories(dir);
    Path flattened = module.resolve("target/.flattened-pom.xml");
    Path installedPom = Files.exists(flattened) ? flattened : module.resolve("pom.xml");
    Files.copy(installedPom, dir.resolve(artifactId + "-" + version + ".pom"));
    if (packaging.equals("jar")) {
      Path jar = module.resolve("target/" + artifactId + "-" + version + ".jar");
      if (!Files.exists(jar)) {
        throw new AssertionError(jar + " is missing: build the reactor from the root (mvn verify), whose "
            + "library modules package before examples");
      }
      Files.copy(jar, dir.resolve(jar.getFileName()));
    }
  }

  /**
   * Makes every third-party artifact of {@code local} visible in {@code repo} through symbolic links, one per
   * top-level directory, except {@code io/converge}: the adopter resolves Converge from this build only.
   */
  private static void linkThirdParty(Path local, Path repo) throws IOException {
    try (Stream<Path> top = Files.list(local)) {
      for (Path dir : (Iterable<Path>) top::iterator) {
        Path target = repo.resolve(dir.getFileName().toString());
        if (dir.getFileName().toString().equals("io")) {
          try (Stream<Path> io = Files.list(dir)) {
            for (Path group : (Iterable<Path>) io::iterator) {
              if (!group.getFileName().toString().equals("converge")) {
                Files.createSymbolicLink(target.resolve(group.getFileName().toString()), group);
              }
            }
          }
        } else if (Files.isDirectory(dir)) {
          Files.createSymbolicLink(target, dir);
        }
      }
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Path rel = from.relativize(f);
        if (rel.startsWith("target")) {
          continue;
        }
        Path dest = to.resolve(rel.toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(dest);
        } else {
          Files.copy(f, dest, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  private static String mvn() {
    String home = System.getProperty("maven.home");
    return home == null || home.isBlank() ? "mvn" : Path.of(home, "bin", "mvn").toString();
  }

  private static Element pom(Path file) throws Exception {
    try (InputStream in = Files.newInputStream(file)) {
      Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
      return d.getDocumentElement();
    }
  }

  /** The direct child element {@code name} of {@code e}, or null. */
  private static Element child(Element e, String name) {
    for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element c && c.getTagName().equals(name)) {
        return c;
      }
    }
    return null;
  }

  private static String text(Element e, String name) {
    Element c = child(e, name);
    if (c == null) {
      throw new AssertionError("<" + name + "> missing in <" + e.getTagName() + ">");
    }
    return c.getTextContent().trim();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
