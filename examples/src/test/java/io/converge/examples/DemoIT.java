package io.converge.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A smaller run of the demo: the database and the delivered messages reconcile. */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class DemoIT {

  @Test
  void ordersAndMessagesReconcile(EmbeddedRocketMQ mq, DataSource db) throws Exception {
    OrderFlow.Report report = new OrderFlow(mq, db).run(30);
    assertThat(report.committed()).isEqualTo(27);
    assertThat(report.rolledBack()).isEqualTo(3);
    assertThat(report.delivered()).isEqualTo(27);
    assertThat(report.deliveredWithoutOrder()).isZero();
    assertThat(report.orderWithoutMessage()).isZero();
    assertThat(report.consistent()).isTrue();
  }
}
