package io.converge.ops.chaos;

import io.converge.broker.DevPlatform;
import io.converge.examples.demo.Backend;
import io.converge.examples.demo.Cancellation;
import io.converge.examples.demo.Disturbance;
import io.converge.examples.demo.DuplicateInjector;
import io.converge.examples.demo.Flow;
import io.converge.examples.demo.SagaReplyFaults;
import io.converge.examples.demo.SagaRun;
import io.converge.examples.demo.SagaTccFaults;
import io.converge.examples.demo.ServiceProcesses;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The faults of one backend's run, played from its {@link FaultPlan} in a background thread while the order
 * traffic runs (the {@link Disturbance} of a {@link SagaRun}). Records what it injected and when; {@link #close()}
 * leaves the broker up, Pulsar thawed, the proxies clean and every service process running. Not reusable.
 */
final class ChaosRun implements Disturbance {

  private static final Duration BACK_TIMEOUT = Duration.ofSeconds(60);

  private final FaultPlan plan;
  private final DevPlatform platform;
  private final Backend backend;
  private final FaultProxy dbProxy;
  private final FaultProxy brokerProxy;
  private final AtomicReference<ServiceProcesses> services;
  private final Supplier<DuplicateInjector> injector;
  private final PrintStream out;
  private final Cancellation cancel = new Cancellation();
  private final List<String> timeline = Collections.synchronizedList(new ArrayList<>());
  private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
  private final Map<Integer, Map<String, String>> skews = new ConcurrentHashMap<>();
  private final AtomicInteger redelivered = new AtomicInteger();
  private final Flow flow;
  private final AtomicInteger repliesDropped = new AtomicInteger();
  private final AtomicInteger repliesDelayed = new AtomicInteger();
  private Duration replyDelay = Duration.ofSeconds(21);
  /** Whether the TCC shots are armed (the REPLY kind in the orchestrated flow with the TCC debit), and its timeout. */
  private boolean tcc;
  private Duration tccDeadline = Duration.ofMinutes(10);
  private final AtomicInteger tccSent = new AtomicInteger();
  /** What the TCC shots' release delivered (its thread writes it; the check reads it after joining it). */
  private volatile SagaTccFaults.Released released = SagaTccFaults.Released.NONE;
  private Thread thread;
  /** The TCC shots' late deliveries, after the traffic ({@link #releaseTcc}); null when none is armed. */
  private Thread late;
  private long started;

  ChaosRun(FaultPlan plan, DevPlatform platform, Backend backend, FaultProxy dbProxy, FaultProxy brokerProxy,
      AtomicReference<ServiceProcesses> services, Supplier<DuplicateInjector> injector, Flow flow, PrintStream out) {
    this.flow = flow;
    this.plan = plan;
    this.platform = platform;
    this.backend = backend;
    this.dbProxy = dbProxy;
    this.brokerProxy = brokerProxy;
    this.services = services;
    this.injector = injector;
    this.out = out;
  }

  @Override
  public void begin() {
    // the reply shots are armed before the traffic: a fault played late (after a kill's restart) would find no reply
    // left to take; each shot is taken by the next forward reply of its step
    plan.steps().stream().filter(s -> s.fault() == Fault.REPLY && flow == Flow.ORCHESTRATION).findFirst()
        .ifPresent(s -> {
          try {
            SagaReplyFaults.arm(services.get(), s.times(), 1, replyDelay);
            repliesDropped.addAndGet(s.times());
            repliesDelayed.incrementAndGet();
            if (tcc) {
              SagaTccFaults.arm(services.get());
            }
          } catch (java.sql.SQLException e) {
            failures.add("the reply faults could not be armed: " + e);
          }
        });
    started = System.nanoTime();
    thread = new Thread(this::play, "chaos-faults-" + backend.mode());
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void awaitEnd(Duration slack) throws InterruptedException {
    Duration last = plan.steps().isEmpty() ? Duration.ZERO : plan.steps().get(plan.steps().size() - 1).at();
    Duration bound = last.plus(BACK_TIMEOUT.multipliedBy(Math.max(1, plan.steps().size()))).plus(slack);
    thread.join(bound.toMillis());
    if (thread.isAlive()) {
      failures.add("the faults did not end within " + bound.toSeconds() + " s");
    }
    if (tcc && plan.steps().stream().anyMatch(s -> s.fault() == Fault.REPLY)) {
      // in the background: its wait for the held Try's global timeout runs while the run's duplicates, late Tries,
      // payments and callbacks go on; awaitLate() joins it before the quiescence and the reconciliation
      late = new Thread(this::releaseTcc, "chaos-tcc-" + backend.mode());
      late.setDaemon(true);
      late.start();
    }
  }

  /** The sagas whose Try this run held past their global timeout: their orders end canceled by it, on purpose. */
  @Override
  public long sagaTimeoutCancels() throws java.sql.SQLException {
    boolean armed = tcc && plan.steps().stream().anyMatch(s -> s.fault() == Fault.REPLY);
    return armed ? SagaTccFaults.heldSagas(services.get()) : 0;
  }

  @Override
  public void awaitLate() throws InterruptedException {
    if (late == null) {
      return;
    }
    Duration bound = tccDeadline.plusMinutes(3);
    late.join(bound.toMillis());
    if (late.isAlive()) {
      failures.add("the held TCC Try and the copied Confirm and Cancel were not delivered within "
          + bound.toSeconds() + " s");
    }
  }

  /**
   * The TCC shots' second half, after the traffic and in the background: the held Try delivered once its Cancel was
   * applied (waiting up to the saga's global timeout and a minute), the copied Confirm and Cancel delivered again;
   * printed, not part of the plan's timeline (one line per planned fault).
   */
  private void releaseTcc() {
    long t0 = elapsedMillis();
    try (DuplicateInjector raw = injector.get()) {
      SagaTccFaults.Released r = SagaTccFaults.release(services.get(), raw, tccDeadline.plusMinutes(1));
      released = r;
      int n = r.sent();
      tccSent.addAndGet(n);
      redelivered.addAndGet(n);
      out.printf("  [chaos %s] +%3d s  TCC: the held Try delivered after its Cancel, a Confirm and a Cancel delivered"
          + " again (their id, a new id): %d messages (done at +%d s)%n", backend.mode(), t0 / 1000, n,
          elapsedMillis() / 1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // close(): the run is over
    } catch (Exception e) {
      failures.add("the held TCC Try and the copied Confirm and Cancel could not be delivered: " + e);
    }
  }

  private void play() {
    for (FaultPlan.Step step : plan.steps()) {
      long wait = step.at().toMillis() - elapsedMillis();
      if (wait > 0 && cancel.pause(Duration.ofMillis(wait))) {
        return;
      }
      long t0 = elapsedMillis();
      try {
        String detail = apply(step);
        record(t0, step.describe(flow == Flow.ORCHESTRATION) + detail + " (back at +" + elapsedMillis() / 1000 + " s)");
      } catch (Exception e) {
        failures.add(step.describe(flow == Flow.ORCHESTRATION) + " failed: " + e);
        record(t0, step.describe(flow == Flow.ORCHESTRATION) + " FAILED: " + e);
      }
    }
  }

  private String apply(FaultPlan.Step step) throws Exception {
    ServiceProcesses sp = services.get();
    switch (step.fault()) {
      case KILL -> {
        sp.kill(step.group());
        cancel.pause(step.length());
        sp.restart(step.group(), skews.getOrDefault(step.group(), Map.of()));
      }
      case SKEW -> {
        String skew = (step.times() < 0 ? "-" : "") + step.length();
        skews.put(step.group(), Map.of("examples.clock-skew", skew));
        sp.kill(step.group());
        sp.restart(step.group(), skews.get(step.group()));
      }
      case BROKER -> {
        if (backend.onPulsar()) {
          hold(platform.pulsar()::freeze, step.length(), platform.pulsar()::thaw);
          return ": Pulsar's JVM SIGSTOP, then SIGCONT";
        }
        hold(platform.rocketmq()::stopBroker, step.length(), platform.rocketmq()::startBroker);
        return ": RocketMQ broker stopped, started on its store";
      }
      case POSTGRES -> {
        return ": pid " + PostgresCrash.crash(platform.postgres().dataSource(), BACK_TIMEOUT);
      }
      case NETWORK -> {
        FaultProxy p = step.group() == 0 ? dbProxy : brokerProxy;
        switch (step.net()) {
          case LATENCY -> hold(() -> p.latency(Duration.ofMillis(100), Duration.ofMillis(200)), step.length(),
              () -> p.latency(Duration.ZERO, Duration.ZERO));
          case DROP -> {
            return ": " + p.dropConnections() + " connections";
          }
          case RESET -> {
            return ": " + p.resetConnections() + " connections";
          }
          case BLACKOUT -> {
            p.blackout(step.length());
            cancel.pause(step.length());
          }
        }
      }
      case REDELIVERY -> {
        try (DuplicateInjector raw = injector.get()) {
          int n = SagaRun.redeliver(flow, sp, raw, 5, step.times());
          redelivered.addAndGet(n);
          return ": " + n + " messages";
        }
      }
      case REPLY -> {
        return flow == Flow.ORCHESTRATION ? replies(sp) : "";
      }
    }
    return "";
  }

  /**
   * The reply fault at its time: the reserve reply of every 5th saga so far sent again twice (the lost and held-back
   * replies were armed by {@link #begin()}).
   */
  private String replies(ServiceProcesses sp) throws Exception {
    try (DuplicateInjector raw = injector.get()) {
      int n = SagaReplyFaults.duplicateReplies(sp, raw, 5);
      redelivered.addAndGet(n);
      return ": shots armed at the start, held " + replyDelay.toMillis() + " ms; " + n + " replies sent again";
    }
  }

  /**
   * Arms the TCC shots too ({@link SagaTccFaults}: the orchestrated flow's debit is a TCC branch), whose held Try the
   * saga cancels at {@code deadline} (its global timeout, {@code examples.saga.deadline}).
   */
  ChaosRun tcc(boolean on, Duration deadline) {
    this.tcc = on && flow == Flow.ORCHESTRATION;
    this.tccDeadline = deadline;
    return this;
  }

  /**
   * After the run settled: whether the flow absorbed the TCC faults (the held Try refused as hanging after the empty
   * rollback of its Cancel, the copies answered once); its broken promises join {@link #failures()}. Empty when none
   * was armed.
   */
  SagaTccFaults.Outcome checkTcc() throws java.sql.SQLException {
    boolean armed = tcc && plan.steps().stream().anyMatch(s -> s.fault() == Fault.REPLY);
    if (!armed) {
      return new SagaTccFaults.Outcome(0, 0, 0, List.of());
    }
    SagaTccFaults.Outcome o = SagaTccFaults.check(services.get(), true, released);
    failures.addAll(o.failures());
    return o;
  }

  /** How long a held-back reply waits: past the step timeout ({@code examples.saga.step-timeout}); default 21 s. */
  ChaosRun replyDelay(Duration delay) {
    this.replyDelay = delay;
    return this;
  }

  /**
   * After the run settled: whether the saga absorbed every reply fault (each taken, timed out, asked again, applied
   * once, never compensated for the timeout); its broken promises join {@link #failures()}. Empty when none was armed.
   */
  SagaReplyFaults.Outcome checkReplies() throws java.sql.SQLException {
    if (repliesDropped.get() == 0 && repliesDelayed.get() == 0) {
      return new SagaReplyFaults.Outcome(0, 0, 0, List.of());
    }
    SagaReplyFaults.Outcome o = SagaReplyFaults.check(services.get(), repliesDropped.get(), repliesDelayed.get());
    failures.addAll(o.failures());
    return o;
  }

  /**
   * Injects a fault with {@code inject}, holds it for {@code length} (less when the run is cancelled), then undoes it
   * with {@code undo}, also when the wait is interrupted.
   */
  private void hold(Runnable inject, Duration length, Runnable undo) {
    inject.run();
    try {
      cancel.pause(length);
    } finally {
      undo.run();
    }
  }

  private long elapsedMillis() {
    return (System.nanoTime() - started) / 1_000_000;
  }

  private void record(long atMillis, String what) {
    String line = String.format("+%3d s  %s", atMillis / 1000, what);
    timeline.add(line);
    out.println("  [chaos " + backend.mode() + "] " + line);
  }

  /** What was injected and when, in order. */
  List<String> timeline() {
    return List.copyOf(timeline);
  }

  /** Faults that could not be injected or undone; empty when all went as planned. */
  List<String> failures() {
    return List.copyOf(failures);
  }

  /** The messages the redelivery faults sent again. */
  int redelivered() {
    return redelivered.get();
  }

  @Override
  public void close() throws InterruptedException {
    cancel.cancel();
    if (thread != null) {
      thread.join(BACK_TIMEOUT.multipliedBy(2).toMillis());
    }
    if (late != null && late.isAlive()) {
      late.interrupt();
      late.join(BACK_TIMEOUT.toMillis());
    }
    dbProxy.latency(Duration.ZERO, Duration.ZERO);
    brokerProxy.latency(Duration.ZERO, Duration.ZERO);
    if (backend.onPulsar()) {
      platform.pulsar().thaw();
    } else if (!platform.rocketmq().isBrokerRunning()) {
      platform.rocketmq().startBroker();
    }
    ServiceProcesses sp = services.get();
    for (int g = 0; sp != null && g < ServiceProcesses.GROUPS.size(); g++) {
      if (!sp.isAlive(g)) {
        try {
          sp.restart(g, skews.getOrDefault(g, Map.of()));
        } catch (java.io.IOException | RuntimeException e) {
          failures.add("service process " + g + " could not be started again: " + e);
        }
      }
    }
  }
}
