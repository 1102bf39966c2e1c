package io.converge.broker.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The child JVM's classpath is rebuilt from the list in converge-pulsar-server and checked jar by jar. */
class ChildClasspathTest {

  private final ClassLoader loader = ChildClasspathTest.class.getClassLoader();

  @Test
  void resolvesEveryJarOfTheListAndTheServerCodeItself() {
    String classpath = ChildClasspath.resolve(loader, ChildClasspath.localRepository());

    String[] entries = classpath.split(File.pathSeparator);
    assertThat(entries).hasSizeGreaterThan(100);
    assertThat(Arrays.stream(entries).map(Path::of)).allMatch(Files::exists);
    assertThat(entries).anyMatch(e -> e.contains("pulsar-broker-4.2.4.jar"));
    assertThat(entries[0]).as("the jar or classes dir of converge-pulsar-server").contains("pulsar-server");
    assertThat(entries).noneMatch(e -> e.contains("@LOCAL_REPO@"));
  }

  @Test
  void missingJarNamesTheArtifactAndHowToResolveIt(@TempDir Path emptyRepository) {
    assertThatThrownBy(() -> ChildClasspath.resolve(loader, emptyRepository))
        .isInstanceOfSatisfying(PulsarArtifactMissingException.class, e -> {
          assertThat(e.artifact()).matches("[\\w.-]+:[\\w.-]+:[\\w.-]+(:jar:[\\w.-]+)?");
          assertThat(e.path().startsWith(emptyRepository)).as("%s in the repository", e.path()).isTrue();
          assertThat(e.getMessage())
              .contains(e.artifact(), e.path().toString(), emptyRepository.toString(), "mvn dependency:resolve");
        });
  }

  @Test
  void coordinatesComeFromTheRepositoryLayout() {
    assertThat(ChildClasspath.coordinates("@LOCAL_REPO@/org/rocksdb/rocksdbjni/7.9.2/rocksdbjni-7.9.2.jar"))
        .isEqualTo("org.rocksdb:rocksdbjni:7.9.2");
    assertThat(ChildClasspath.coordinates("@LOCAL_REPO@/io/netty/netty-transport-native-epoll/4.1.136.Final/"
        + "netty-transport-native-epoll-4.1.136.Final-linux-x86_64.jar"))
        .isEqualTo("io.netty:netty-transport-native-epoll:4.1.136.Final:jar:linux-x86_64");
    assertThat(ChildClasspath.coordinates("lib/odd.jar")).isEqualTo("lib/odd.jar");
  }
}
