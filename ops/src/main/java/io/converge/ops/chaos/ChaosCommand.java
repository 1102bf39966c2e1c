package io.converge.ops.chaos;

import io.converge.broker.DevPlatform;
import io.converge.examples.demo.Backend;
import io.converge.examples.demo.Flow;
import io.converge.examples.demo.Outages;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code converge chaos}: the saga's services as separate processes on embedded servers, under a seeded schedule of
 * faults, reconciled afterwards; exits 1 when an invariant fails or anything is stuck on any backend.
 */
@Command(name = "chaos", mixinStandardHelpOptions = true, description = {
    "Runs the examples' saga services as 3 processes (order+payment, inventory, account+notification) behind TCP",
    "fault proxies on embedded RocketMQ, PostgreSQL (and Pulsar), drives orders and charges over HTTP with retries",
    "and Idempotency-Keys, injects faults on a --seed reproducible schedule (kill -9 + restart, broker restart or",
    "Pulsar SIGSTOP/SIGCONT, PostgreSQL crash restart, proxy latency/drops/resets/blackouts, forced redelivery,",
    "clock skew; with --flow orchestration also saga replies dropped, held back past the step timeout and",
    "duplicated), then reconciles: exit 0 only when every invariant holds, every saga completed or compensated",
    "with each compensation run once, and nothing is stuck."})
public final class ChaosCommand implements Callable<Integer> {

  @Option(names = "--backend", defaultValue = "all", description = "rocketmq, outbox, pulsar or all (default ${DEFAULT-VALUE})")
  String backend;

  @Option(names = "--duration", defaultValue = "PT60S", description = "order traffic per backend, ISO-8601 (default ${DEFAULT-VALUE})")
  Duration duration;

  @Option(names = "--orders-per-second", defaultValue = "2", description = "order rate (default ${DEFAULT-VALUE}; at least 40 orders per backend)")
  double ordersPerSecond;

  @Option(names = "--faults", split = ",", defaultValue = "kill,broker,postgres,network,redelivery,skew,reply", description = "fault kinds (default ${DEFAULT-VALUE}; reply: orchestrated flow only)")
  List<String> faults;

  @Option(names = "--faults-per-kind", defaultValue = "1", description = "how often each kind is injected per backend (default ${DEFAULT-VALUE})")
  int perKind;

  @Option(names = "--seed", defaultValue = "1", description = "the seed of the fault schedule and the jitter (default ${DEFAULT-VALUE})")
  long seed;

  @Option(names = "--soak", paramLabel = "N", description = "soak: N orders per backend at --orders-per-second (sets --duration), each fault kind once a minute")
  Integer soak;

  @Option(names = "--settle", defaultValue = "PT3M", description = "bound on the quiescence after the traffic (default ${DEFAULT-VALUE})")
  Duration settle;

  @Option(names = "--flow", defaultValue = "choreography", description = "the order flow of the services:"
      + " choreography (events chained by the services) or orchestration (the saga coordinator in the order service,"
      + " killed with it by the kill and skew faults; the reply fault drops, holds back and duplicates its participants'"
      + " replies, holds a TCC debit Try past the saga's global timeout and delivers a Confirm and a Cancel twice)"
      + " (default ${DEFAULT-VALUE})")
  String flow;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    List<Backend> backends = new ArrayList<>();
    List<Fault> kinds = new ArrayList<>();
    Flow orderFlow;
    try {
      if (backend.equalsIgnoreCase("all")) {
        backends.addAll(List.of(Backend.values()));
      } else {
        backends.add(Backend.parse(backend));
      }
      faults.stream().filter(s -> !s.isBlank()).map(Fault::parse).forEach(kinds::add);
      orderFlow = Flow.parse(flow);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    if (ordersPerSecond <= 0 || ordersPerSecond > 200) {
      throw new ParameterException(spec.commandLine(),
          "--orders-per-second must be > 0 and <= 200, but was " + ordersPerSecond);
    }
    Duration traffic = duration;
    int times = perKind;
    if (soak != null) {
      traffic = Duration.ofSeconds(Math.max(10, (long) Math.ceil(soak / ordersPerSecond)));
      times = Math.max(perKind, (int) traffic.toMinutes());
    }
    Chaos.Options options = new Chaos.Options(traffic, soak != null ? soak / (double) traffic.toSeconds()
        : ordersPerSecond, kinds, times, seed, settle, withFlow(Outages.SHORT_POOL_TIMEOUT, orderFlow));
    PrintStream out = System.out;
    Path dir = Files.createTempDirectory("converge-chaos-");
    boolean passed = true;
    try (DevPlatform platform = DevPlatform.builder().fastTransactionChecks()
        .startPulsar(backends.contains(Backend.PULSAR)).start()) {
      Chaos chaos = new Chaos(platform, options, dir, out);
      for (Backend b : backends) {
        passed &= chaos.run(b).passed();
      }
    }
    out.println(passed ? "converge chaos: PASSED (seed " + seed + ")" : "converge chaos: FAILED (seed " + seed + ")");
    return passed ? 0 : 1;
  }

  /** The services' properties with the order flow. */
  static java.util.Map<String, String> withFlow(java.util.Map<String, String> properties, Flow flow) {
    java.util.Map<String, String> p = new java.util.HashMap<>(properties);
    p.put(Flow.PROPERTY, flow.value());
    return java.util.Map.copyOf(p);
  }
}
