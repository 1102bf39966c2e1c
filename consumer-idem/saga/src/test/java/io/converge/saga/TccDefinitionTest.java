package io.converge.saga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.producer.TxnProducer;
import io.converge.producer.UnitOfWork;
import io.converge.saga.tcc.TccOperation;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link TccDefinition}: its saga shape, and validation errors that name the property and quote the value. */
class TccDefinitionTest {

  @Test
  void theSagaShapeIsTheTriesCancelledByTheirCancelsThenTheConfirms() {
    TccDefinition<String> def = TccDefinition.builder("transfer", SagaCodec.json())
        .branch("account", b -> b.messages("account-tcc").cancelTopic("account-cancel"))
        .branch("points", b -> b.participant("loyalty").http(URI.create("http://points:8080/tcc")))
        .globalTimeout(Duration.ofSeconds(20)).build();
    SagaDefinition<String> saga = def.saga();
    assertThat(saga.tcc()).isTrue();
    assertThat(saga.tccBranches()).isEqualTo(2);
    assertThat(def.branches()).containsExactly("account", "points");
    assertThat(saga.steps()).extracting(SagaStep::name).containsExactly("account", "points", "account/confirm",
        "points/confirm");
    assertThat(saga.steps()).extracting(SagaStep::operation).containsExactly(TccOperation.TRY, TccOperation.TRY,
        TccOperation.CONFIRM, TccOperation.CONFIRM);
    SagaStep<String> account = saga.step(0);
    assertThat(account.commandTopic()).isEqualTo("account-tcc");
    assertThat(account.compensationTopic()).isEqualTo("account-cancel");
    assertThat(account.compensable()).isTrue();
    assertThat(new String(account.command("{\"a\":1}"))).as("the data's JSON by default").isEqualTo("{\"a\":1}");
    assertThat(saga.step(2).commandTopic()).isEqualTo("account-tcc");
    assertThat(saga.step(2).compensable()).as("a Confirm is never cancelled").isFalse();
    SagaStep<String> points = saga.step(1);
    assertThat(points.overHttp()).isTrue();
    assertThat(points.participant()).isEqualTo("loyalty");
    assertThat(points.url(TccOperation.CANCEL)).isEqualTo(URI.create("http://points:8080/tcc"));
    assertThat(def.globalTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(def.ticketAfter()).isEqualTo(3);
    assertThat(SagaDefinition.builder("plain", SagaCodec.json()).local("l", (c, d) -> d).build().tcc()).isFalse();
  }

  @Test
  void invalidDefinitionsNameThePropertyAndQuoteTheValue() {
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).build())
        .hasMessage("tcc.branches must hold at least one branch, but was none");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a/confirm", b -> b.messages("x"))
        .build()).hasMessageStartingWith("tcc.branches[0].name must match").hasMessageEndingWith("but was 'a/confirm'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("x"))
        .branch("a", b -> b.messages("y")).build())
        .hasMessage("tcc.branches[1].name must be unique in 't', but was 'a'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> {
    }).build())
        .hasMessage("tcc.branches[0] must be reached by messages or over HTTP (exactly one), but was neither");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("bad topic"))
        .build()).hasMessageStartingWith("tcc.branches[0].topic must match").hasMessageEndingWith("'bad topic'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.http(
        URI.create("http://h/try"), URI.create("/relative"), URI.create("http://h/cancel"))).build())
        .hasMessage("tcc.branches[0].url.confirm must be an absolute http or https URL, but was '/relative'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.http(
        URI.create("ftp://h/tcc"))).build()).hasMessageEndingWith("but was 'ftp://h/tcc'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.http(
        URI.create("http://h/tcc")).cancelTopic("c")).build())
        .hasMessage("tcc.branches[0] must have no topics when over HTTP, but was 'null', 'c'");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("x")
        .timeout(Duration.ZERO)).build()).hasMessageStartingWith("tcc.branches[0].timeout must be between 10 ms"
            + " and 1 day");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("x"))
        .globalTimeout(Duration.ofMillis(5)).build()).hasMessageStartingWith("tcc.globalTimeout must be between 1 s"
            + " and 30 days");
    assertThatThrownBy(() -> TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("x"))
        .ticketAfter(0).build()).hasMessageStartingWith("tcc.ticketAfter must be between 1 and 100");
  }

  @Test
  void theCoordinatorBuilderValidatesItsHttpSettings() {
    TccDefinition<String> def = TccDefinition.builder("t", SagaCodec.json()).branch("a", b -> b.messages("x")).build();
    TxnProducer unused = new TxnProducer() { // build() validates only; nothing runs on it

      @Override
      public <T> T inTransaction(UnitOfWork<T> work) {
        throw new UnsupportedOperationException();
      }

      @Override
      public String group() {
        return "g";
      }

      @Override
      public String backend() {
        return "none";
      }

      @Override
      public void close() {
      }
    };
    assertThatThrownBy(() -> SagaCoordinator.builder().producer(unused).tcc(def).replyTopic("r").httpConcurrency(0)
        .build()).hasMessage("saga.httpConcurrency must be between 1 and 1000, but was 0");
    assertThatThrownBy(() -> SagaCoordinator.builder().producer(unused).tcc(def).replyTopic("r")
        .httpConnectTimeout(Duration.ZERO).build()).hasMessageStartingWith("saga.httpConnectTimeout must be between"
            + " 1 ms and 10 min");
    assertThatThrownBy(() -> SagaCoordinator.builder().producer(unused).tcc(def).definitions(
        SagaDefinition.builder("t", SagaCodec.json()).local("l", (c, d) -> d).build()).replyTopic("r").build())
        .hasMessage("saga.definitions must have unique names, but was 't' twice");
    try (SagaCoordinator c = SagaCoordinator.builder().producer(unused).tcc(def).replyTopic("r").build()) {
      assertThat(c).isNotNull();
    }
  }
}
