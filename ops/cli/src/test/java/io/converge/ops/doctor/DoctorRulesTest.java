package io.converge.ops.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@code converge doctor} on settings the embedded servers of {@link DoctorIT} are not started with: a
 * Pulsar broker without transactions or coordinators, RocketMQ check windows against the producers' settings.
 */
class DoctorRulesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final RocketMQRules.Producer DEFAULTS = new RocketMQRules.Producer(Duration.ofSeconds(30),
      Duration.ofSeconds(450), Duration.ofDays(7));

  @Test
  void pulsarWithoutTransactionsOrSystemTopicsFails() throws Exception {
    List<Finding> found = new ArrayList<>();
    PulsarRules.settings(JSON.readTree("{\"transactionCoordinatorEnabled\":\"false\"}"), found::add);
    assertThat(found).extracting(Finding::status, Finding::check).containsExactly(
        org.assertj.core.groups.Tuple.tuple(Finding.Status.FAIL, "pulsar.transactions"),
        org.assertj.core.groups.Tuple.tuple(Finding.Status.FAIL, "pulsar.system-topics"));
    assertThat(found.get(0).fix()).contains("transactionCoordinatorEnabled=true");
  }

  @Test
  void pulsarCoordinatorsNotAllReadyOrNoneAssignedFail() throws Exception {
    List<Finding> found = new ArrayList<>();
    PulsarRules.coordinators(2, JSON.readTree("{\"0\":{\"state\":\"Ready\"},\"1\":{\"state\":\"Initializing\"}}"),
        found::add);
    PulsarRules.coordinators(0, JSON.createObjectNode(), found::add);
    PulsarRules.coordinators(1, JSON.readTree("{\"0\":{\"state\":\"Ready\"}}"), found::add);
    assertThat(found).extracting(Finding::status).containsExactly(Finding.Status.FAIL, Finding.Status.FAIL,
        Finding.Status.PASS);
    assertThat(found.get(0).found()).contains("2 coordinators assigned, 1 ready").contains("1 Initializing");
    assertThat(found.get(1).fix()).contains("initialize-transaction-coordinator-metadata");
  }

  @Test
  void rocketmqCheckWindowAgainstTheProducers() {
    assertThat(window("30000", "15", DEFAULTS)).containsExactly(Finding.Status.PASS, Finding.Status.PASS);
    // 45 s: longer than the 30 s unit, but less than twice it
    assertThat(window("3000", "15", DEFAULTS)).containsExactly(Finding.Status.WARN, Finding.Status.PASS);
    // 20 min: longer than the producers' broker-check-window, still covered by 7 days of log
    assertThat(window("60000", "20", DEFAULTS)).containsExactly(Finding.Status.PASS, Finding.Status.WARN);
    // ... not covered by a 30 min log retention: a check-back may find its row purged
    assertThat(window("60000", "20",
        new RocketMQRules.Producer(Duration.ofSeconds(30), Duration.ofSeconds(450), Duration.ofMinutes(30))))
        .containsExactly(Finding.Status.PASS, Finding.Status.FAIL);
  }

  @Test
  void rocketmqTopicWithTooFewQueuesOrGroupsWarns() {
    List<Finding> found = new ArrayList<>();
    RocketMQRules.topic("t", List.of(2), 1, 4, found::add);
    RocketMQRules.topic("t", List.of(4), 2, 4, found::add);
    RocketMQRules.topic("t", List.of(), 2, 4, found::add);
    assertThat(found).extracting(Finding::status).containsExactly(Finding.Status.WARN, Finding.Status.WARN,
        Finding.Status.FAIL);
    assertThat(found.get(1).found()).contains("on 1 of 2 broker groups");
  }

  @Test
  void aWarningOrFailureWithoutAFixIsRefused() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new Finding(Finding.Status.WARN, "c", "x", null))
        .hasMessage("a WARN finding needs a fix: c");
  }

  private static List<Finding.Status> window(String interval, String max, RocketMQRules.Producer producer) {
    Properties p = new Properties();
    p.setProperty("transactionTimeOut", "6000");
    p.setProperty("transactionCheckInterval", interval);
    p.setProperty("transactionCheckMax", max);
    List<Finding> found = new ArrayList<>();
    RocketMQRules.check("b", p, producer, found::add);
    return found.stream().map(Finding::status).toList();
  }
}
