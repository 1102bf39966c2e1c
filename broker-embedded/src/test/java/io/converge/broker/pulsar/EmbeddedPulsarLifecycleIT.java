package io.converge.broker.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
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
    try {
      assertThat(child.isAlive()).isTrue();
      assertThat(pulsar.serviceUrl()).matches("pulsar://127\\.0\\.0\\.1:\\d+");
      assertThat(pulsar.httpUrl()).matches("http://127\\.0\\.0\\.1:\\d+");
      assertThat(dataDir.resolve("pulsar.log")).exists();
    } finally {
      pulsar.stop();
    }

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
    long t0 = System.nanoTime();

    assertThatThrownBy(pulsar::start).isInstanceOfSatisfying(PulsarStartException.class, e -> {
      assertThat(e.getMessage()).contains("did not start within PT0.3S");
      assertThat(e.logFile()).exists();
    });
    // a child that hangs in its start does not read stdin: it must be terminated, not waited for
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    assertThat(childPids()).isSubsetOf(before);
    deleteRecursively(dataDir);
  }

  @Test
  void brokerSettingReachesTheBroker() throws Exception {
    try (EmbeddedPulsar pulsar = EmbeddedPulsar.builder().brokerSetting("maxMessageSize", "65536").build().start();
        PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
        Producer<byte[]> producer = client.newProducer().topic(PulsarExtension.uniqueTopic("limit"))
            .enableBatching(false).create()) {
      producer.send(new byte[60_000]);
      assertThatThrownBy(() -> producer.send(new byte[70_000]))
          .isInstanceOf(PulsarClientException.InvalidMessageException.class)
          .hasMessageContaining("65536");
    }
  }

  @Test
  void unknownBrokerSettingIsNamed() {
    EmbeddedPulsar pulsar = EmbeddedPulsar.builder().brokerSetting("noSuchSetting", "1").build();
    Path dataDir = pulsar.dataDir();

    assertThatThrownBy(pulsar::start).isInstanceOfSatisfying(PulsarStartException.class,
        e -> assertThat(e.getMessage()).contains("exited with code 2", "unknown broker setting noSuchSetting"));
    deleteRecursively(dataDir);
  }

  @Test
  void invalidBrokerSettingIsRefusedWithItsValue() {
    assertThatThrownBy(() -> EmbeddedPulsar.builder().brokerSetting("max size", "1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pulsar.brokerSetting name must be a Java identifier, but was max size");
    assertThatThrownBy(() -> EmbeddedPulsar.builder().brokerSetting("clusterName", "a\nb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pulsar.brokerSetting.clusterName must be one line");
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
