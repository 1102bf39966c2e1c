package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SagaDefinitionTest {

  private static SagaDefinition.Builder<String> order() {
    return SagaDefinition.builder("order", SagaCodec.json())
        .remote("reserve", s -> s.participant("inventory").command("inv-cmd", SagaCodec::utf8)
            .compensation("inv-comp", SagaCodec::utf8).timeout(Duration.ofSeconds(2)).retry(RetryPolicy.attempts(4)))
        .remote("notify", s -> s.participant("mail").command("mail-cmd", SagaCodec::utf8))
        .local("mark-paid", (c, d) -> d, (c, d) -> d);
  }

  @Test
  void buildsAnImmutableDefinitionWithDefaults() {
    SagaDefinition<String> d = order().build();
    assertThat(d.name()).isEqualTo("order");
    assertThat(d.steps()).extracting(SagaStep::name).containsExactly("reserve", "notify", "mark-paid");
    assertThat(d.step(0).kind()).isEqualTo(SagaStep.Kind.REMOTE);
    assertThat(d.step(0).compensable()).isTrue();
    assertThat(d.step(0).retry().maxAttempts()).isEqualTo(4);
    assertThat(d.step(1).compensable()).isFalse();
    assertThat(d.step(1).timeout()).isEqualTo(SagaStep.RemoteSpec.DEFAULT_TIMEOUT);
    assertThat(d.step(1).retry()).isEqualTo(RetryPolicy.defaults());
    assertThat(d.step(2).kind()).isEqualTo(SagaStep.Kind.LOCAL);
    assertThat(d.step(2).compensable()).isTrue();
    assertThat(d.deadline()).isEqualTo(SagaDefinition.DEFAULT_DEADLINE);
    assertThat(d.compensationAttempts()).isEqualTo(3);
    assertThatThrownBy(() -> d.steps().clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void errorsNameThePropertyAndQuoteTheValue() {
    assertThatThrownBy(() -> SagaDefinition.builder("bad name", SagaCodec.json()).local("a", (c, d) -> d).build())
        .hasMessage("saga.name must match " + SagaDefinition.NAME.pattern() + ", but was bad name");
    assertThatThrownBy(() -> SagaDefinition.builder("s", SagaCodec.json()).build())
        .hasMessage("saga.steps must hold at least one step, but was none");
    assertThatThrownBy(() -> order().remote("x", s -> s.participant("p").command("bad topic", SagaCodec::utf8)).build())
        .hasMessage("saga.steps[3].commandTopic must match [A-Za-z0-9_%|-]{1,127}, but was 'bad topic'");
    assertThatThrownBy(() -> order().remote("reserve", s -> s.participant("p").command("t", SagaCodec::utf8)).build())
        .hasMessage("saga.steps[3].name must be unique in saga 'order', but was 'reserve'");
    assertThatThrownBy(() -> order().remote("x", s -> s.participant("p").command("t", SagaCodec::utf8)
        .compensation("t", SagaCodec::utf8)).build())
        .hasMessageStartingWith("saga.steps[3].compensationTopic must differ from the command topic")
        .hasMessageEndingWith("but was 't'");
    assertThatThrownBy(() -> order().remote("x", s -> s.participant("p").command("t", SagaCodec::utf8)
        .timeout(Duration.ofMillis(1))).build())
        .hasMessage("saga.steps[3].timeout must be between 10 ms and 1 day, but was PT0.001S");
    assertThatThrownBy(() -> order().remote("x", s -> s.command("t", SagaCodec::utf8)).build())
        .hasMessageStartingWith("saga.steps[3].participant must match");
    assertThatThrownBy(() -> order().remote("x", s -> s.participant("p").command("t", null)).build())
        .hasMessage("saga.steps[3].command is required");
    assertThatThrownBy(() -> order().local("y", null).build()).hasMessage("saga.steps[3].action is required");
    assertThatThrownBy(() -> order().deadline(Duration.ZERO).build())
        .hasMessage("saga.deadline must be between 1 s and 30 days, but was PT0S");
    assertThatThrownBy(() -> order().compensationAttempts(0).build())
        .hasMessage("saga.compensationAttempts must be between 1 and 100, but was 0");
    assertThatThrownBy(() -> new RetryPolicy(0, Duration.ofMillis(1), Duration.ofMillis(1)))
        .hasMessage("retry.maxAttempts must be between 1 and 100, but was 0");
    assertThatThrownBy(() -> new RetryPolicy(2, Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessage("retry.maxBackoff must be between retry.initialBackoff (PT2S) and 1 h, but was PT1S");
  }

  @Test
  void theDefaultClassifierReadsTheOutcomeHeaderAndCallsTheUnknownAnAnomaly() {
    ReplyClassifier c = ReplyClassifier.byOutcomeHeader();
    for (ReplyClass k : ReplyClass.values()) {
      assertThat(c.classify(new SagaReply(k.name(), Map.of(), new byte[0]))).isEqualTo(k);
    }
    assertThat(c.classify(new SagaReply(null, Map.of(), new byte[0]))).isEqualTo(ReplyClass.ANOMALY);
    assertThat(c.classify(new SagaReply("ok", Map.of(), new byte[0]))).isEqualTo(ReplyClass.ANOMALY);
  }

  @Test
  void aSagaStepCanBeTheTryOrTheConfirmOfATccBranchAndIsValidatedAsOne() {
    SagaDefinition<String> d = order()
        .remote("debit", s -> s.participant("account").tccTry("debit").command("acc-cmd", SagaCodec::utf8)
            .compensation("acc-comp", SagaCodec::utf8))
        .remote("debit-confirm", s -> s.participant("account").tccConfirm("debit").command("acc-cmd", SagaCodec::utf8))
        .build();
    assertThat(d.tcc()).isFalse(); // a saga with TCC steps, not the shape of a TccDefinition
    assertThat(d.step(0).branch()).isNull();
    assertThat(d.step(3).branch()).isEqualTo("debit");
    assertThat(d.step(3).operation()).isEqualTo(io.converge.saga.tcc.TccOperation.TRY);
    assertThat(d.step(3).confirm()).isFalse();
    assertThat(d.step(4).operation()).isEqualTo(io.converge.saga.tcc.TccOperation.CONFIRM);
    assertThat(d.step(4).confirm()).isTrue();
    assertThat(d.step(4).compensable()).isFalse();
    assertThatThrownBy(() -> order().remote("debit", s -> s.participant("a").tccTry("debit")
        .command("t", SagaCodec::utf8)).build())
        .hasMessage("saga.steps[3].compensation must be the Cancel of branch 'debit', but was none");
    assertThatThrownBy(() -> order().remote("c", s -> s.participant("a").tccConfirm("debit")
        .command("t", SagaCodec::utf8)).build())
        .hasMessage("saga.steps[3].branch must be tried by an earlier step, but was 'debit'");
    assertThatThrownBy(() -> order().remote("debit", s -> s.participant("a").tccTry("debit")
        .command("t", SagaCodec::utf8).compensation("u", SagaCodec::utf8))
        .remote("c", s -> s.participant("a").tccConfirm("debit").command("t", SagaCodec::utf8)
            .compensation("u", SagaCodec::utf8))
        .build())
        .hasMessage("saga.steps[4].compensation must be none for a Confirm, but was 'u'");
    assertThatThrownBy(() -> order().remote("x", s -> s.participant("a").tccTry("bad branch")
        .command("t", SagaCodec::utf8).compensation("u", SagaCodec::utf8)).build())
        .hasMessageStartingWith("saga.steps[3].branch must match");
  }

  @Test
  void retryBackoffStaysWithinItsBounds() {
    RetryPolicy p = new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(300));
    for (int i = 1; i <= 5; i++) {
      long ceiling = Math.min(300, 100L << (i - 1));
      assertThat(p.backoff(i).toMillis()).isBetween(ceiling / 2, ceiling);
    }
  }
}
