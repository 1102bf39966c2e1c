package io.converge.ops.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fault schedule: reproducible from its seed, within the traffic, each kind as often as asked. */
class FaultPlanTest {

  private static final List<Fault> ALL = List.of(Fault.values());

  @Test
  void theSameSeedGivesTheSamePlanAnotherSeedAnother() {
    FaultPlan a = FaultPlan.of(1, Duration.ofSeconds(60), ALL, 2, 3);
    assertThat(FaultPlan.of(1, Duration.ofSeconds(60), ALL, 2, 3)).isEqualTo(a);
    assertThat(FaultPlan.of(2, Duration.ofSeconds(60), ALL, 2, 3)).isNotEqualTo(a);
  }

  @Test
  void eachKindAsOftenAsAskedInOrderWithinTheTraffic() {
    FaultPlan p = FaultPlan.of(7, Duration.ofSeconds(100), ALL, 3, 3);
    assertThat(p.steps()).hasSize(3 * ALL.size());
    for (Fault f : ALL) {
      assertThat(p.steps()).filteredOn(s -> s.fault() == f).hasSize(3);
    }
    assertThat(p.steps()).isSortedAccordingTo(java.util.Comparator.comparing(FaultPlan.Step::at));
    assertThat(p.steps()).allSatisfy(s -> {
      assertThat(s.at()).isBetween(Duration.ofSeconds(10), Duration.ofSeconds(75));
      assertThat(s.group()).isBetween(0, 2);
      assertThat(s.describe()).isNotBlank();
    });
    assertThat(p.steps()).filteredOn(s -> s.fault() == Fault.NETWORK).allSatisfy(s -> assertThat(s.net()).isNotNull());
    assertThat(p.steps()).filteredOn(s -> s.fault() == Fault.REDELIVERY)
        .allSatisfy(s -> assertThat(s.times()).isBetween(2, 5));
  }

  /** The orchestrated flow re-sends saga commands, not OrderCreated; the reply fault is named for what it does. */
  @Test
  void labelsNameWhatIsReallySentInEachFlow() {
    FaultPlan p = FaultPlan.of(3, Duration.ofSeconds(60), List.of(Fault.REDELIVERY, Fault.REPLY), 1, 3);
    FaultPlan.Step redelivery = p.steps().stream().filter(s -> s.fault() == Fault.REDELIVERY).findFirst().get();
    assertThat(redelivery.describe(false)).startsWith("OrderCreated of every 5th order");
    assertThat(redelivery.describe(true)).doesNotContain("OrderCreated").contains("reserve command")
        .contains("every 5th saga");
    FaultPlan.Step reply = p.steps().stream().filter(s -> s.fault() == Fault.REPLY).findFirst().get();
    assertThat(reply.times()).isEqualTo(2);
    assertThat(reply.describe(true)).contains("2 reserve replies dropped").contains("held back past the step timeout")
        .contains("sent again").contains("1 Try held in transit past the saga's global timeout")
        .contains("1 Confirm and 1 Cancel delivered again");
    assertThat(reply.describe(false)).startsWith("none");
    assertThat(Fault.parse("reply")).isEqualTo(Fault.REPLY);
  }

  /** The held Try's saga must reach its global timeout within the run, a held-back reply's saga never. */
  @Test
  void theGlobalTimeoutOfARunWithTccFaultsOutlastsAHeldBackReplyAndARestart() {
    assertThat(Chaos.tccDeadline(java.util.Map.of("examples.saga.step-timeout", "PT3S")))
        .isEqualTo(Duration.ofSeconds(44));
    assertThat(Chaos.tccDeadline(java.util.Map.of())).isEqualTo(Duration.ofSeconds(72))
        .isGreaterThan(Chaos.replyDelay(java.util.Map.of()).plusSeconds(25));
  }

  @Test
  void aHeldBackReplyOutlastsTheStepTimeout() {
    assertThat(Chaos.replyDelay(java.util.Map.of())).isEqualTo(Duration.ofSeconds(21));
    assertThat(Chaos.replyDelay(java.util.Map.of("examples.saga.step-timeout", "PT3S")))
        .isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void unknownFaultIsNamed() {
    assertThat(Fault.parse(" Kill ")).isEqualTo(Fault.KILL);
    assertThatThrownBy(() -> Fault.parse("meteor")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("but was 'meteor'");
  }
}
