package io.converge.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The one environment holder of the dev command, the bench and the demo: it hands out its servers,
 * creates unique topics, prints the addresses, and a platform wrapping servers started elsewhere
 * leaves them running when it is closed.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class DevPlatformIT {

  @Test
  void wrapsServersStartedElsewhereAndLeavesThemRunning(EmbeddedRocketMQ mq, ConvergePostgres pg) throws Exception {
    DevPlatform platform = DevPlatform.of(mq, pg, null);
    String topic = platform.newTopic("dev-platform");
    assertThat(topic).startsWith("dev-platform-").isNotEqualTo(platform.newTopic("dev-platform"));
    assertThat(platform.newPulsarTopic("p")).startsWith("p-");
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    platform.describe(new PrintStream(text, true, StandardCharsets.UTF_8));
    assertThat(text.toString(StandardCharsets.UTF_8)).contains(mq.nameServerAddress(), pg.jdbcUrl())
        .doesNotContain("Pulsar");

    platform.close();

    assertThat(mq.isBrokerRunning()).isTrue();
    try (Connection c = pg.dataSource().getConnection()) {
      assertThat(c.isValid(5)).isTrue();
    }
  }

  @Test
  void aPlatformThatStartedItsServersLeavesTheJvmsSharedPostgresToTheNextOne() throws Exception {
    DevPlatform first = DevPlatform.builder().start();
    assertThat(first.postgres()).isSameAs(ConvergePostgres.shared());
    first.close();
    try (Connection c = ConvergePostgres.shared().dataSource().getConnection()) {
      assertThat(c.isValid(5)).as("the shared server still runs for the next platform of this JVM").isTrue();
    }
  }
}
