package io.converge.ops.chaos;

import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.pulsar.PulsarExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.examples.demo.Backend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ChaosIT}'s run of the Pulsar backend (its faults in {@link ChaosIT#KINDS}, its orchestrated flow in
 * {@link ChaosIT#FLOWS}), in a class of its own so that the suite's two test JVMs run it beside the RocketMQ and outbox
 * runs. Pulsar runs in its own JVM (PulsarExtension's child), so that RocketMQ's broker never shares its class path.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class, PulsarExtension.class})
class ChaosPulsarIT {

  @Test
  void pulsar(EmbeddedRocketMQ mq, ConvergePostgres pg, EmbeddedPulsar pulsar) throws Exception {
    ChaosIT.run(DevPlatform.of(mq, pg, pulsar), Backend.PULSAR, ChaosIT.DIR);
  }
}
