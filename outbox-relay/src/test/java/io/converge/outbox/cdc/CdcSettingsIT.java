package io.converge.outbox.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.outbox.DiscardingSink;
import io.converge.outbox.RelayBed;
import io.converge.outbox.RelayFixture;
import io.converge.outbox.spi.RelayMetrics;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A relay keeps the settings it was built with: the builder changed after {@code build()}, or used for
 * a second relay, does not reach it. Needs no engine start: {@link CdcRelay#resume} works on a relay
 * that was never started.
 */
class CdcSettingsIT {

  private static final class Published implements RelayMetrics {

    final AtomicInteger rows = new AtomicInteger();

    @Override
    public void published(int count) {
      rows.addAndGet(count);
    }
  }

  @Test
  void changingTheBuilderAfterBuildLeavesTheBuiltRelayAlone() throws Exception {
    CdcSupport.Schema outbox = CdcSupport.newSchema();
    RelayFixture.publish(RelayFixture.producer(outbox.ds()), "cdc-settings", "k");
    ConvergePostgres pg = ConvergePostgres.shared();
    Published first = new Published();
    Published second = new Published();
    String name = RelayBed.uniqueName("set");
    CdcRelay.Builder builder = CdcRelay.builder().name(name).jdbcUrl(pg.jdbcUrl(), pg.user(), pg.password())
        .schema(outbox.name()).sink(new DiscardingSink()).metrics(first);
    try (CdcRelay relay = builder.build();
        CdcRelay other = builder.name(name + "_2").schema("elsewhere").metrics(second).build()) {
      assertThat(relay.resume("k")).isEqualTo(1);
      assertThat(first.rows).as("the metrics the relay was built with").hasValue(1);
      assertThat(second.rows).as("the metrics of the builder's later relay").hasValue(0);
      assertThat(relay.slotName()).isEqualTo("converge_cdc_" + name);
      assertThat(other.slotName()).isEqualTo("converge_cdc_" + name + "_2");
    }
  }
}
