package io.converge.broker.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Starting and stopping the child JVM: failures explain themselves, and nothing is left behind. */
class EmbeddedPulsarLifecycleIT {

  @Test
  void stopLeavesNoProcessAndDeletesTheTemporaryDataDir() {
    Set<Long> before = childPids();
    EmbeddedPulsar pulsar = EmbeddedPulsar.builder().build().start();
    Path dataDir = pulsar.dataDir();
    ProcessHandle child = pulsar.childProcess().orElseThrow();
    assertThat(child.isAlive()).isTrue();
    assertThat(pulsar.serviceUrl()).matches("pulsar://127\\.0\\.0\\.1:\\d+");
    assertThat(pulsar.httpUrl()).matches("http://127\\.0\\.0\\.1:\\d+");
    assertThat(dataDir.resolve("pulsar.log")).exists();

    pulsar.stop();

    assertThat(child.isAlive()).isFalse();
    assertThat(childPids()).isSubsetOf(before);
    assertThat(pulsar.childProcess()).isEmpty();
    assertThat(dataDir).doesNotExist();
    pulsar.stop(); // idempotent
    assertThatThrownBy(pulsar::serviceUrl).hasMessageContaining("not started");
  }

  @Test
  void childThatExitsReportsTheTailOfItsLog(@TempDir Path tmp) {
    Set<Long> before = childPids();
    Path dataDir = tmp.resolve("pulsar");
    EmbeddedPulsar pulsar = EmbeddedPulsar.builder().dataDir(dataDir)
        .jvmOption("-XX:+ConvergeNoSuchOption").build();

    assertThatThrownBy(pulsar::start).isInstanceOfSatisfying(PulsarStartException.class, e -> {
      assertThat(e.getMessage()).contains("exited with code 1", "Unrecognized VM option", e.logFile().toString());
      assertThat(e.logTail()).contains("ConvergeNoSuchOption");
      assertThat(e.logFile()).isEqualTo(dataDir.resolve("pulsar.log")).exists();
    });
    assertThat(childPids()).isSubsetOf(before);
  }

  @Test
  void startTimeoutKillsTheChildAndKeepsItsLog() {
    Set<Long> before = childPids();
    EmbeddedPulsar pulsar = EmbeddedPulsar.builder().startTimeout(Duration.ofMillis(300)).build();
    Path dataDir = pulsar.dataDir();

    assertThatThrownBy(pulsar::start).isInstanceOfSatisfying(PulsarStartException.class, e -> {
      assertThat(e.getMessage()).contains("did not start within PT0.3S");
      assertThat(e.logFile()).exists();
    });
    assertThat(childPids()).isSubsetOf(before);
    deleteRecursively(dataDir);
  }

  @Test
  void invalidStartTimeoutIsRefusedWithItsValue() {
    assertThatThrownBy(() -> EmbeddedPulsar.builder().startTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pulsar.startTimeout must be positive, but was PT0S");
  }

  /** Live child processes of this JVM (the shared server of other test classes may be among them). */
  private static Set<Long> childPids() {
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
        .map(ProcessHandle::pid).collect(Collectors.toSet());
  }

  private static void deleteRecursively(Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException e) {
      // a leftover temp dir is harmless
    }
  }
}
