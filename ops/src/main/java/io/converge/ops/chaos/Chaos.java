package io.converge.ops.chaos;

import io.converge.broker.DevPlatform;
import io.converge.examples.events.ChaosReplyFaults;
import io.converge.examples.demo.Backend;
import io.converge.examples.demo.FlowChecks;
import io.converge.examples.demo.SagaReplyFaults;
import io.converge.examples.demo.DuplicateInjector;
import io.converge.examples.demo.PulsarInjector;
import io.converge.examples.demo.Report;
import io.converge.examples.demo.RocketMQInjector;
import io.converge.examples.demo.SagaRun;
import io.converge.examples.demo.SagaTccFaults;
import io.converge.examples.demo.ServiceProcesses;
import io.converge.examples.demo.Services;
import io.converge.examples.demo.Transport;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * {@code converge chaos} on a started platform: per backend, the saga's services as three processes behind
 * {@link FaultProxy proxies} (database and broker), the demo's order and charge traffic over HTTP, the faults of
 * a {@link FaultPlan} while it runs, the demo's reconciliation after a bounded quiescence, and the verdict: what
 * was injected, what was absorbed, the saga's figures. Not thread-safe.
 */
public final class Chaos {

  /**
   * What to run.
   *
   * @param duration how long the order traffic lasts per backend
   * @param ordersPerSecond the order rate; orders = rate x duration (at least 40, so that every case is reached)
   * @param faults the kinds injected, each {@code perKind} times per backend
   * @param seed the seed of the plan and of the proxies' jitter
   * @param settle the bound on the quiescence after the traffic
   * @param serviceProperties added to every service's configuration
   * @param jvmProperties system properties of every service process (e.g. the RocketMQ client's lock timings)
   */
  public record Options(Duration duration, double ordersPerSecond, List<Fault> faults, int perKind, long seed,
      Duration settle, Map<String, String> serviceProperties, Map<String, String> jvmProperties) {

    /** Options whose service processes get no extra system property. */
    public Options(Duration duration, double ordersPerSecond, List<Fault> faults, int perKind, long seed,
        Duration settle, Map<String, String> serviceProperties) {
      this(duration, ordersPerSecond, faults, perKind, seed, settle, serviceProperties, Map.of());
    }

    /** The orders of one backend's run. */
    public int orders() {
      return (int) Math.max(40, Math.round(ordersPerSecond * duration.toSeconds()));
    }
  }

  /** One backend's outcome. */
  public record Verdict(Backend backend, Report report, List<String> injected, List<String> faultFailures,
      Map<String, Double> figures) {

    /** Whether every invariant held, every fault was injected and undone, and nothing is stuck. */
    public boolean passed() {
      return report.consistent() && faultFailures.isEmpty() && figures.getOrDefault("saga.stuck_count", 0.0) == 0;
    }
  }

  /** The figures of the verdict: meter name and label. */
  static final Map<String, String> ABSORBED = figures();

  private static Map<String, String> figures() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("consumer.duplicates", "duplicate deliveries absorbed (consumers)");
    m.put("consumer.failures", "deliveries failed and retried (consumers)");
    m.put("txn.checkbacks", "check-backs answered (RocketMQ half messages)");
    m.put("txn.ends.dropped", "transaction ends dropped, left to recovery");
    m.put("txn.pulsar.parked", "Pulsar transactions parked after recovery");
    m.put("outbox.published", "outbox rows published by the relays");
    m.put("idempotency.hit", "HTTP answers replayed for a retried key");
    m.put("idempotency.in_progress", "HTTP 409 while the same key ran");
    m.put("idempotency.taken_over", "HTTP keys taken over after a crash");
    return m;
  }

  private final DevPlatform platform;
  private final Options options;
  private final Path dir;
  private final PrintStream out;

  /** A runner on {@code platform}; logs and meters of the service processes go to {@code dir}. */
  public Chaos(DevPlatform platform, Options options, Path dir, PrintStream out) {
    this.platform = platform;
    this.options = options;
    this.dir = dir;
    this.out = out;
  }

  /** Runs {@code backend} and prints its verdict. */
  public Verdict run(Backend backend) throws Exception {
    String run = backend.mode() + "-" + UUID.randomUUID().toString().substring(0, 6);
    Path runDir = Files.createDirectories(dir.resolve(run));
    URI pg = URI.create(platform.postgres().jdbcUrl().substring("jdbc:".length()));
    String broker = backend.onPulsar() ? URI.create(platform.pulsar().serviceUrl()).getAuthority()
        : platform.rocketmq().nameServerAddress();
    int brokerPort = Integer.parseInt(broker.substring(broker.lastIndexOf(':') + 1));
    try (FaultProxy dbProxy = FaultProxy.start("postgresql", pg.getHost(), pg.getPort(), options.seed());
        FaultProxy brokerProxy = FaultProxy.start(backend.onPulsar() ? "pulsar" : "rocketmq-nameserver",
            broker.substring(0, broker.lastIndexOf(':')), brokerPort, options.seed() + 1)) {
      Map<String, String> transport = new LinkedHashMap<>();
      Transport.properties(platform, backend, run)
          .forEach((k, v) -> transport.put(k, v.replace(broker, brokerProxy.address())));
      transport.putAll(options.serviceProperties());
      boolean replyFaults = options.faults().contains(Fault.REPLY)
          && io.converge.examples.demo.Flow.of(transport) == io.converge.examples.demo.Flow.ORCHESTRATION;
      boolean tccFaults = replyFaults && "tcc".equals(transport.getOrDefault("examples.saga.debit", "tcc"));
      if (replyFaults) {
        transport.put(ChaosReplyFaults.PROPERTY, "true");
      }
      if (tccFaults) {
        transport.putIfAbsent(DEADLINE, tccDeadline(transport).toString());
      }
      String pgAuthority = pg.getAuthority();
      AtomicReference<ServiceProcesses> services = new AtomicReference<>();
      Services.Starter base = ServiceProcesses.starter(runDir,
          url -> url.replace("//" + pgAuthority + "/", "//" + dbProxy.address() + "/"), options.jvmProperties());
      Services.Starter starter = (b, db, r, t) -> {
        Services s = base.start(b, db, r, t);
        services.set((ServiceProcesses) s);
        return s;
      };
      String ns = platform.rocketmq().nameServerAddress();
      String url = backend.onPulsar() ? platform.pulsar().serviceUrl() : null;
      Supplier<DuplicateInjector> injector = () -> backend.onPulsar() ? PulsarInjector.open(url)
          : RocketMQInjector.open(ns);
      FaultPlan plan = FaultPlan.of(options.seed() + backend.ordinal(), options.duration(), options.faults(),
          options.perKind(), ServiceProcesses.GROUPS.size());
      ChaosRun faults = new ChaosRun(plan, platform, backend, dbProxy, brokerProxy, services, injector,
          io.converge.examples.demo.Flow.of(transport), out).replyDelay(replyDelay(transport))
          .tcc(tccFaults, Duration.parse(transport.getOrDefault(DEADLINE, "PT10M")));
      out.printf("Chaos on backend %s, flow %s: %d orders over %d s, %d faults (seed %d); services %s as 3"
          + " processes; logs in %s%n", backend.mode(), io.converge.examples.demo.Flow.of(transport).value(),
          options.orders(), options.duration().toSeconds(), plan.steps().size(), options.seed(),
          ServiceProcesses.GROUPS, runDir);
      Progress progress = new Progress(services, backend, out);
      Report report;
      try {
        report = new SagaRun(backend, platform.postgres(), transport, injector, options.settle(), faults,
            options.duration(), starter).run(run, options.orders());
      } finally {
        progress.close();
      }
      SagaReplyFaults.Outcome replies = faults.checkReplies();
      SagaTccFaults.Outcome tcc = faults.checkTcc();
      Map<String, Double> figures = new LinkedHashMap<>();
      ServiceProcesses sp = services.get();
      for (String name : ABSORBED.keySet()) {
        figures.put(name, sp.meter(name));
      }
      figures.put("saga.step_latency.count", sp.meter("saga.step_latency.count"));
      figures.put("saga.step_latency.total_ms", sp.meter("saga.step_latency.total_ms"));
      figures.put("saga.step_latency.max_ms", sp.meter("saga.step_latency.max_ms"));
      figures.put("saga.compensation_rate", sp.gauge("saga.compensation_rate"));
      figures.put("saga.stuck_count", sp.gauge("saga.stuck_count"));
      figures.put("redelivered", (double) faults.redelivered());
      figures.put("reply.dropped", (double) replies.dropped());
      figures.put("reply.delayed", (double) replies.delayed());
      figures.put("reply.duplicates_recorded", (double) replies.duplicatesRecorded());
      figures.put("tcc.try_held", (double) tcc.held());
      figures.put("tcc.try_held.hanging_refused", (double) tcc.hangingRefused());
      figures.put("tcc.copied", (double) tcc.copied());
      figures.put("tcc.hanging", sp.meter("tcc.hanging"));
      figures.put("tcc.confirm.duplicate", sp.meter("tcc.barrier.calls.confirm.DUPLICATE"));
      figures.put("tcc.cancel.duplicate", sp.meter("tcc.barrier.calls.cancel.DUPLICATE"));
      figures.put("tcc.cancel.empty_rollback", sp.meter("tcc.barrier.calls.cancel.EMPTY_ROLLBACK"));
      List<String> failures = new java.util.ArrayList<>(faults.failures());
      if (tcc.copied() > 0 && (figures.get("tcc.confirm.duplicate") == 0 || figures.get("tcc.cancel.duplicate") == 0)) {
        // the barrier's answer to a copy with a new id is only in its reply and its meter, not in a table
        failures.add("TCC: a Confirm or Cancel delivered again with a new id was not answered DUPLICATE by the"
            + " account's barrier (tcc.barrier.calls: confirm DUPLICATE " + figures.get("tcc.confirm.duplicate")
            + ", cancel DUPLICATE " + figures.get("tcc.cancel.duplicate") + ")");
      }
      Verdict v = new Verdict(backend, report, faults.timeline(), List.copyOf(failures), figures);
      print(v);
      return v;
    }
  }

  /** The saga's global timeout in the examples' orchestrated flow (default 10 min). */
  static final String DEADLINE = "examples.saga.deadline";

  /**
   * The orchestrated saga's global timeout in a run with the TCC faults, unless the service properties set one: twice
   * the held-back reply's wait ({@link #replyDelay}) and 30 s, so that a reply held back or a process restarted
   * (15-25 s) still ends its saga before it, while the held Try's saga reaches it within the run (the default, 10 min,
   * would outlast it). 44 s with ChaosIT's 3 s step timeout, 72 s with the default 10 s.
   */
  static Duration tccDeadline(Map<String, String> serviceProperties) {
    return replyDelay(serviceProperties).multipliedBy(2).plusSeconds(30);
  }

  /**
   * How long a held-back reply waits: twice the step timeout ({@code examples.saga.step-timeout}, default 10 s) and
   * a second, so that the coordinator's poll (1 s) surely timed the step out before the reply arrives.
   */
  static Duration replyDelay(Map<String, String> serviceProperties) {
    Duration timeout = Duration.parse(serviceProperties.getOrDefault("examples.saga.step-timeout", "PT10S"));
    return timeout.multipliedBy(2).plusSeconds(1);
  }

  private void print(Verdict v) {
    v.report().print(out);
    out.println("  Injected:");
    v.injected().forEach(l -> out.println("    " + l));
    v.faultFailures().forEach(l -> out.println("    FAILED: " + l));
    out.println("  Absorbed:");
    ABSORBED.forEach((name, label) -> out.printf("    %-46s %8.0f   (%s)%n", label, v.figures().get(name), name));
    out.printf("    %-46s %8.0f%n", "messages redelivered by the faults", v.figures().get("redelivered"));
    double n = v.figures().get("saga.step_latency.count");
    out.println("  Saga:");
    out.printf(
        "    saga.step_latency      %.0f ends, mean %.0f ms, max %.0f ms (Micrometer's max: the last 2 min only)%n", n,
        n == 0 ? 0 : v.figures().get("saga.step_latency.total_ms") / n, v.figures().get("saga.step_latency.max_ms"));
    out.printf("    saga.compensation_rate %.3f%n", v.figures().get("saga.compensation_rate"));
    out.printf("    saga.stuck_count       %.0f%n", v.figures().get("saga.stuck_count"));
    out.printf("    replies dropped %.0f, held back past the step timeout %.0f (each timed out, asked again, applied"
        + " once), second copies recorded as DUPLICATE_REPLY %.0f%n", v.figures().get("reply.dropped"),
        v.figures().get("reply.delayed"), v.figures().get("reply.duplicates_recorded"));
    if (v.figures().get("tcc.copied") + v.figures().get("tcc.try_held") > 0) {
      out.printf("    TCC debit: Tries held past the global timeout %.0f, refused as hanging after their Cancel's empty"
          + " rollback %.0f times (tcc.hanging in all: %.0f; empty rollbacks %.0f); Confirm and Cancel delivered again"
          + " %.0f, answered DUPLICATE by the barrier: Confirm %.0f, Cancel %.0f%n", v.figures().get("tcc.try_held"),
          v.figures().get("tcc.try_held.hanging_refused"), v.figures().get("tcc.hanging"),
          v.figures().get("tcc.cancel.empty_rollback"), v.figures().get("tcc.copied"),
          v.figures().get("tcc.confirm.duplicate"), v.figures().get("tcc.cancel.duplicate"));
    }
    boolean ended = v.report().violations().stream().noneMatch(l -> l.startsWith(FlowChecks.SAGAS_ENDED));
    boolean once = v.report().violations().stream().noneMatch(l -> l.startsWith(FlowChecks.COMPENSATIONS_ONCE));
    out.println("    every saga completed or compensated, none running: " + (ended ? "yes" : "NO")
        + "; compensations run once (participants' tables): " + (once ? "yes" : "NO"));
    out.println("  Verdict, backend " + v.backend().mode() + ": " + (v.passed() ? "PASSED" : "FAILED"));
  }

  /** The progress line: orders stored, paid, canceled, open, every 10 s while a backend runs. */
  private static final class Progress implements AutoCloseable {

    private final Thread thread;

    Progress(AtomicReference<ServiceProcesses> services, Backend backend, PrintStream out) {
      long t0 = System.nanoTime();
      thread = new Thread(() -> {
        try {
          while (true) {
            Thread.sleep(10_000); // the period of the progress line, not a synchronisation
            ServiceProcesses sp = services.get();
            if (sp == null) {
              continue;
            }
            try (Connection c = sp.db("order").getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("""
                    SELECT count(*), count(*) FILTER (WHERE state = 'PAID'), count(*) FILTER (WHERE state = 'CANCELED'),
                           count(*) FILTER (WHERE state = 'CREATED') FROM orders""")) {
              rs.next();
              out.printf("  [progress %s +%d s] orders %d: paid %d, canceled %d, open %d%n", backend.mode(),
                  (System.nanoTime() - t0) / 1_000_000_000, rs.getLong(1), rs.getLong(2), rs.getLong(3),
                  rs.getLong(4));
            } catch (java.sql.SQLException e) {
              out.printf("  [progress %s] the order database does not answer: %s%n", backend.mode(), e.getMessage());
            }
          }
        } catch (InterruptedException e) {
          // closed
        }
      }, "chaos-progress");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() {
      thread.interrupt();
    }
  }
}
