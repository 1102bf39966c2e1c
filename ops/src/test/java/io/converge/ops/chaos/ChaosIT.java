package io.converge.ops.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.DevPlatform;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.postgres.PostgresExtension;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.examples.demo.Backend;
import io.converge.examples.demo.Flow;
import io.converge.examples.demo.Outages;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The short {@code converge chaos} run of each backend: the saga's services as three processes, 40 orders over
 * {@link #TRAFFIC}, one fault of each kind given to that backend, and the verdict must pass: every reconciliation
 * invariant, every fault injected and undone, nothing stuck; the faults were felt (the verdict lists each). The kinds
 * are spread over the backends so that each backend gets at least two and every kind runs on one at least
 * ({@link #KINDS}); the command ({@code converge chaos}) injects all six on every backend. Pulsar's run is
 * {@link ChaosPulsarIT}, a class of its own so that the suite's two test JVMs run it beside this one.
 */
@ExtendWith({RocketMQExtension.class, PostgresExtension.class})
class ChaosIT {

  static final Duration TRAFFIC = Duration.ofSeconds(20);
  /** The services' logs and meters, kept after the run. */
  static final Path DIR = Path.of("target", "chaos");
  /**
   * Per backend: RocketMQ's broker restart on its store (half messages checked back) and PostgreSQL's crash restart
   * on the half-message path; on the outbox, PostgreSQL's crash restart (the relay's own database) and a skew (a
   * kill -9 and a restart with a skewed clock, which covers kill on its own; each restart costs 15-25 s); on Pulsar,
   * kill -9 mid-flight, a proxy fault, forced redelivery and the saga's reply faults (Pulsar's SIGSTOP stays with the
   * command: it would freeze the Pulsar server this test JVM shares).
   */
  static final Map<Backend, List<Fault>> KINDS = Map.of(
      Backend.ROCKETMQ, List.of(Fault.BROKER, Fault.POSTGRES, Fault.REDELIVERY),
      Backend.OUTBOX, List.of(Fault.POSTGRES, Fault.SKEW),
      Backend.PULSAR, List.of(Fault.KILL, Fault.NETWORK, Fault.REDELIVERY, Fault.REPLY));

  /**
   * The RocketMQ client's queue locks (orderly consumers), as this module's failsafe configuration sets them for its
   * test JVM, forwarded to the service processes: six times shorter than the defaults, in the same proportions
   * (renewed every 2 s instead of 20 s, held by a client 5 s without a renewal instead of 30 s, by the broker 10 s
   * instead of 60 s), so that a live client still stops consuming before the broker could hand its queue to another.
   * A process killed -9 (skew, kill) holds its queues' locks at the broker until they expire: with the defaults its
   * next incarnation waited up to a minute for them, and the run with it.
   */
  static final Map<String, String> LOCKS = Map.of(
      "rocketmq.client.rebalance.lockInterval", System.getProperty("rocketmq.client.rebalance.lockInterval", "20000"),
      "rocketmq.client.rebalance.lockMaxLiveTime",
      System.getProperty("rocketmq.client.rebalance.lockMaxLiveTime", "30000"));

  /**
   * The services' configuration: the demo's short pool timeout, a 3 s saga step timeout, and a 10 s Idempotency-Key
   * lease instead of the
   * default minute (the order endpoint expects 2 s; the lease must be longer). A request whose process was killed
   * leaves its key claimed until the lease ends; the client retries it until then: with the default lease the run's
   * order traffic waited up to a minute for each such key.
   */
  static final Map<String, String> SERVICES = services();

  private static Map<String, String> services() {
    Map<String, String> m = new java.util.HashMap<>(Outages.SHORT_POOL_TIMEOUT);
    m.put("converge.idempotency.lease", "10s");
    // the orchestrated run's step timeout: a held-back reply waits twice as long and a second (Chaos#replyDelay),
    // 7 s instead of 21 s with the default PT10S
    m.put("examples.saga.step-timeout", "PT3S");
    return Map.copyOf(m);
  }

  /**
   * The order flow per backend: Pulsar's run is the orchestrated one (the saga coordinator in the order service, so its
   * kill -9 kills the coordinator mid-saga, and its forced redelivery duplicates commands and replies); the others
   * choreographed. The demo's suite run (DemoOutageIT) splits the flows the other way.
   */
  static final Map<Backend, Flow> FLOWS = Map.of(Backend.ROCKETMQ, Flow.CHOREOGRAPHY, Backend.OUTBOX,
      Flow.CHOREOGRAPHY, Backend.PULSAR, Flow.ORCHESTRATION);

  static Chaos.Verdict run(DevPlatform platform, Backend backend, Path dir) throws Exception {
    List<Fault> faults = KINDS.get(backend);
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(new Tee(text), true, StandardCharsets.UTF_8);
    Chaos.Options options = new Chaos.Options(TRAFFIC, 2, faults, 1, 1, Duration.ofMinutes(2),
        ChaosCommand.withFlow(SERVICES, FLOWS.get(backend)), LOCKS);
    Chaos.Verdict v = new Chaos(platform, options, dir, out).run(backend);
    String printed = text.toString(StandardCharsets.UTF_8);
    assertThat(v.injected()).as(printed).hasSize(faults.size());
    assertThat(v.faultFailures()).as(printed).isEmpty();
    assertThat(v.report().violations()).as(printed).isEmpty();
    assertThat(v.figures().get("saga.stuck_count")).as(printed).isZero();
    assertThat(v.figures().get("saga.step_latency.count")).as(printed).isPositive();
    if (faults.contains(Fault.REDELIVERY)) {
      assertThat(v.figures().get("redelivered")).as(printed).isPositive();
    }
    if (faults.contains(Fault.REPLY)) {
      // every armed shot was taken (and checked: timed out, asked again, applied once, not compensated for it), and
      // the second copies with a new id were recorded, not applied
      assertThat(v.figures().get("reply.dropped")).as(printed).isEqualTo(2.0);
      assertThat(v.figures().get("reply.delayed")).as(printed).isEqualTo(1.0);
      assertThat(v.figures().get("reply.duplicates_recorded")).as(printed).isPositive();
      // the TCC debit: one Try held in transit past the saga's global timeout, its Cancel an empty rollback, the Try
      // then refused as hanging (checked against the coordinator's timeline and the account's barrier and books); one
      // Confirm and one Cancel delivered again with their id and with a new one, the latter answered DUPLICATE
      assertThat(v.figures().get("tcc.try_held")).as(printed).isEqualTo(1.0);
      assertThat(v.figures().get("tcc.try_held.hanging_refused")).as(printed).isPositive();
      assertThat(v.figures().get("tcc.copied")).as(printed).isEqualTo(2.0);
      assertThat(v.figures().get("tcc.confirm.duplicate")).as(printed).isPositive();
      assertThat(v.figures().get("tcc.cancel.duplicate")).as(printed).isPositive();
      assertThat(printed).contains("every saga completed or compensated, none running: yes;"
          + " compensations run once (participants' tables): yes");
    }
    assertThat(v.passed()).as(printed).isTrue();
    assertThat(printed).contains("Verdict, backend " + backend.mode() + ": PASSED");
    return v;
  }

  @Test
  void everyKindRunsOnSomeBackendAndEachBackendGetsTwo() {
    assertThat(KINDS.values().stream().flatMap(List::stream).distinct()).containsExactlyInAnyOrder(Fault.values());
    assertThat(KINDS.keySet()).containsExactlyInAnyOrder(Backend.values());
    KINDS.values().forEach(k -> assertThat(k).hasSizeGreaterThanOrEqualTo(2));
  }

  @Test
  void rocketmq(EmbeddedRocketMQ mq, ConvergePostgres pg) throws Exception {
    run(DevPlatform.of(mq, pg, null), Backend.ROCKETMQ, DIR);
  }

  @Test
  void outbox(EmbeddedRocketMQ mq, ConvergePostgres pg) throws Exception {
    run(DevPlatform.of(mq, pg, null), Backend.OUTBOX, DIR);
  }

  /** Prints to the test's log too, so that a long run shows its progress. */
  private static final class Tee extends OutputStream {

    private final OutputStream copy;

    Tee(OutputStream copy) {
      this.copy = copy;
    }

    @Override
    public void write(int b) {
      try {
        copy.write(b);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      System.out.write(b);
    }
  }
}
