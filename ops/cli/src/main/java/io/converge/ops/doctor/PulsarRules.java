package io.converge.ops.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The rules for a Pulsar broker's transaction settings and coordinators (pure: the admin API's JSON in, findings out).
 * Stateless.
 */
final class PulsarRules {

  private PulsarRules() {
  }

  /** Checks the broker's runtime configuration (GET /admin/v2/brokers/configuration/runtime). */
  static void settings(JsonNode config, Consumer<Finding> out) {
    if (!"true".equals(config.path("transactionCoordinatorEnabled").asText())) {
      out.accept(Finding.fail("pulsar.transactions", "transactionCoordinatorEnabled = "
          + config.path("transactionCoordinatorEnabled").asText("absent") + ": Pulsar refuses every transaction "
          + "(Pulsar's default is false)",
          "set transactionCoordinatorEnabled=true (and systemTopicEnabled=true) in "
              + "broker.conf on every broker, initialise the coordinators, restart the brokers"));
    } else {
      out.accept(Finding.pass("pulsar.transactions", "transactionCoordinatorEnabled = true"));
    }
    if (!"true".equals(config.path("systemTopicEnabled").asText())) {
      out.accept(Finding.fail("pulsar.system-topics", "systemTopicEnabled = "
          + config.path("systemTopicEnabled").asText("absent")
          + ": the transaction buffer snapshots need system topics",
          "set systemTopicEnabled=true in broker.conf and restart the brokers"));
    } else {
      out.accept(Finding.pass("pulsar.system-topics", "systemTopicEnabled = true"));
    }
  }

  /**
   * Checks the coordinators: {@code partitions} of the coordinator-assign topic, and their stats (GET
   * /admin/v3/transactions/coordinatorStats: coordinator id to its state).
   */
  static void coordinators(int partitions, JsonNode stats, Consumer<Finding> out) {
    if (partitions <= 0) {
      out.accept(Finding.fail("pulsar.coordinators", "no transaction coordinator is assigned (the topic "
          + "pulsar/system/transaction_coordinator_assign has no partitions)",
          "bin/pulsar "
              + "initialize-transaction-coordinator-metadata -cs ZK -c CLUSTER --initial-num-transaction-coordinators 16"));
      return;
    }
    List<String> notReady = new ArrayList<>();
    int ready = 0;
    for (Iterator<Map.Entry<String, JsonNode>> it = stats.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> c = it.next();
      if ("Ready".equalsIgnoreCase(c.getValue().path("state").asText())) {
        ready++;
      } else {
        notReady.add(c.getKey() + " " + c.getValue().path("state").asText("unknown"));
      }
    }
    String found = partitions + " coordinators assigned, " + ready + " ready";
    if (ready < partitions) {
      out.accept(Finding.fail("pulsar.coordinators", found + (notReady.isEmpty() ? "" : ", not ready: " + notReady)
          + ": transactions on the others fail (CoordinatorNotFoundException, apache/pulsar#20851)",
          "check the brokers' logs for the coordinators' recovery; unload the namespace pulsar/system or restart the "
              + "broker that owns them"));
    } else {
      out.accept(Finding.pass("pulsar.coordinators", found));
    }
  }
}
