package io.converge.pulsar;

import io.converge.saga.SagaCrashContract;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The saga coordinator's crash-point contract (the saga module's {@link SagaCrashContract}) on Pulsar transactions:
 * a coordinator killed before its transition's DB commit leaves a Pulsar transaction the broker aborts at its
 * timeout (the command never delivered); killed after the DB commit and before the Pulsar commit, it leaves a logged
 * transaction that the survivor's recovery scan commits by id or re-publishes from the log, with no coordinator
 * running. Either way the saga completes and each participant's work runs once.
 */
class PulsarSagaCrashIT extends SagaCrashContract {

  @RegisterExtension
  static final PulsarBroker pulsar = new PulsarBroker();

  PulsarSagaCrashIT() {
    super(PulsarSagaCrashBackend.class);
  }

  @Override
  protected Map<String, String> env() {
    return Map.of("serviceUrl", pulsar.serviceUrl());
  }

  @Override
  protected void createTopic(String topic) {
    try {
      PulsarSinkITSupport.admin(pulsar.server(), "PUT", topic, null);
    } catch (Exception e) {
      throw new IllegalStateException("creating topic " + topic, e);
    }
  }
}
