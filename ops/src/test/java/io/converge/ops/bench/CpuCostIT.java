package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The bench finds the embedded PostgreSQL server behind a data source and sees its CPU grow with its work. */
class CpuCostIT {

  @Test
  void thePostgresServerIsFoundAndItsCpuGrowsWithItsWork() throws Exception {
    if (!System.getProperty("os.name").toLowerCase().contains("linux")) {
      return;
    }
    ConvergePostgres pg = ConvergePostgres.shared();
    OptionalLong postmaster = CpuCost.postmaster(pg.dataSource());
    assertThat(postmaster).isPresent();
    long before = CpuCost.treeNow(postmaster.getAsLong());
    try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
      s.execute("SELECT sum(i) FROM generate_series(1, 3000000) i");
    }
    long after = CpuCost.treeNow(postmaster.getAsLong());
    assertThat(before).isNotNegative();
    assertThat(after - before).as("the backend's work is counted (a reaped backend too)").isPositive();
    assertThat(CpuCost.jvmNow()).isPositive();
  }

}
