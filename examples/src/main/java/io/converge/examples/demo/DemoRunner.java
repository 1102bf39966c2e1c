package io.converge.examples.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Runs the saga on each named backend in turn and prints their reports. */
public final class DemoRunner {

  private final DemoPlatform platform;
  private final PrintStream out;
  private final List<Report> reports = new ArrayList<>();

  public DemoRunner(DemoPlatform platform, PrintStream out) {
    this.platform = platform;
    this.out = out;
  }

  /**
   * Runs {@code orders} orders on each backend of {@code backends} ({@code rocketmq,outbox,pulsar}).
   *
   * @return true when every invariant held on every backend
   */
  public boolean run(int orders, String backends) throws Exception {
    boolean ok = true;
    for (String name : backends.split(",")) {
      Backend backend = Backend.parse(name);
      String run = backend.mode() + "-" + UUID.randomUUID().toString().substring(0, 6);
      out.println("Running " + orders + " orders on backend " + backend.mode() + " ...");
      Report report = platform.saga(backend, run, Duration.ofSeconds(120)).run(run, orders);
      platform.describe(out);
      report.print(out);
      reports.add(report);
      ok &= report.consistent();
    }
    return ok;
  }

  /** The reports of the runs so far. */
  public List<Report> reports() {
    return List.copyOf(reports);
  }
}
