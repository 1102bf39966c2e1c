package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.bench.outbox.DrainScenario;
import org.junit.jupiter.api.Test;

/** Every scenario {@code converge bench} lists answers to the name it is listed under, with its unit. */
class ScenariosTest {

  @Test
  void everyScenarioAnswersToItsNameWithItsUnit() throws Exception {
    int checked = 0;
    for (String name : Scenarios.names()) {
      if (DrainScenario.isDrain(name)) {
        continue; // drain scenarios are built by the drain bench, not by Scenarios.create
      }
      try (Scenario s = Scenarios.create(name)) {
        assertThat(s.name()).isEqualTo(name);
        assertThat(s.unit()).isIn("msg", "tx", "order", "saga", "unit", "branch", "global");
      }
      checked++;
    }
    assertThat(checked).isGreaterThan(10);
  }

  @Test
  void theTccScenariosCountBranchesAgainstTheirBaselineAndGlobalTransactions() throws Exception {
    assertThat(Scenarios.names()).contains("tcc-barrier", "tcc-handler-plain", "tcc-global-rocketmq",
        "tcc-global-outbox", "tcc-global-pulsar");
    for (String name : new String[]{"tcc-barrier", "tcc-barrier-commit", "tcc-handler-plain"}) {
      try (Scenario s = Scenarios.create(name)) {
        assertThat(s.unit()).as(name).isEqualTo("branch");
      }
    }
    for (String name : new String[]{"tcc-global-rocketmq", "tcc-global-outbox", "tcc-global-pulsar"}) {
      try (Scenario s = Scenarios.create(name)) {
        assertThat(s.unit()).as(name).isEqualTo("global");
        assertThat(s.latencies()).as(name).isNotNull();
        assertThat(s.reference()).as(name).contains("DTM", "575");
      }
    }
  }
}
