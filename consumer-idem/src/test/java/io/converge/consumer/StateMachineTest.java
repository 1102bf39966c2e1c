package io.converge.consumer;

import static io.converge.consumer.PaymentState.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StateMachineTest {

  private final StateMachine<PaymentState> machine = PaymentState.machine(StateMachine.ConflictPolicy.FAIL);

  @Test
  void allowsExactlyTheWhitelist() {
    assertThat(machine.isAllowed(CREATED, AUTHORIZING)).isTrue();
    assertThat(machine.isAllowed(CAPTURING, AUTHORIZED)).isTrue();
    assertThat(machine.isAllowed(REFUNDED, CAPTURED)).isFalse();
    assertThat(machine.isAllowed(CREATED, CAPTURED)).isFalse();
    assertThat(machine.targets(FAILED)).isEmpty();
    assertThat(machine.targets(AUTHORIZED)).containsExactlyInAnyOrder(CAPTURING, REVERSED);
    int allowed = 0;
    for (PaymentState from : PaymentState.values()) {
      for (PaymentState to : PaymentState.values()) {
        allowed += machine.isAllowed(from, to) ? 1 : 0;
      }
    }
    assertThat(allowed).isEqualTo(11);
  }

  @Test
  void illegalTransitionIsATypedErrorNamingEntityFromAndTo() {
    assertThatThrownBy(() -> machine.check(42L, REFUNDED, CAPTURED))
        .isInstanceOfSatisfying(IllegalTransitionException.class, e -> {
          assertThat(e.entityType()).isEqualTo("payment");
          assertThat(e.entityId()).isEqualTo(42L);
          assertThat(e.from()).isEqualTo("REFUNDED");
          assertThat(e.to()).isEqualTo("CAPTURED");
        })
        .hasMessageContaining("payment 42: REFUNDED -> CAPTURED");
  }

  @Test
  void refusesUnsafeIdentifiersAndEmptyWhitelists() {
    assertThatThrownBy(() -> StateMachine.builder("payment", PaymentState.class).allow(CREATED, CANCELED)
        .table("payment; drop table x").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("stateMachine.payment.table").hasMessageContaining("but was payment; drop table x");
    assertThatThrownBy(() -> StateMachine.builder("payment", PaymentState.class).build())
        .hasMessageContaining("must allow at least one transition");
  }

  @Test
  void classifierSendsIllegalTransitionsToBusinessNotRetry() {
    assertThat(FailureClassifier.defaults().classify(new IllegalTransitionException("payment", 1, "A", "B")))
        .isEqualTo(FailureKind.BUSINESS);
    assertThat(FailureClassifier.defaults().classify(new StaleStateException("payment", 1, "A", 3, "now B")))
        .isEqualTo(FailureKind.TECHNICAL);
  }
}
