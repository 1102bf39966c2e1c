package io.converge.examples.demo;

import io.converge.broker.DevPlatform;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Runs the saga on each named backend in turn, each in both flows (choreographed, then orchestrated) unless the
 * backend names one ({@code rocketmq:orchestration}), and prints their reports.
 */
public final class DemoRunner {

  private final DevPlatform platform;
  private final PrintStream out;
  private final Outages outages;
  private final Map<String, String> properties;
  private final List<Report> reports = new ArrayList<>();
  private final List<Flow> flows = new ArrayList<>();
  private SpanExporter spans;

  private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(120);

  /** A runner without outages. */
  public DemoRunner(DevPlatform platform, PrintStream out) {
    this(platform, out, Outages.NONE, Map.of());
  }

  /**
   * A runner that plays {@code outages} in each phase and adds {@code properties} to every service's
   * configuration (e.g. a shorter {@code spring.datasource.hikari.connection-timeout}).
   */
  public DemoRunner(DevPlatform platform, PrintStream out, Outages outages, Map<String, String> properties) {
    this.platform = platform;
    this.out = out;
    this.outages = outages;
    this.properties = Map.copyOf(properties);
  }

  /**
   * Runs {@code orders} orders on each backend of {@code backends} ({@code rocketmq,outbox,pulsar}), in both flows, or
   * in the flow a backend names ({@code rocketmq:orchestration,outbox:choreography}).
   *
   * @return true when every invariant held on every backend
   */
  public boolean run(int orders, String backends) throws Exception {
    boolean ok = true;
    for (String spec : backends.split(",")) {
      String[] backendFlow = spec.split(":", 2);
      Backend backend = Backend.parse(backendFlow[0]);
      for (Flow flow : backendFlow.length > 1 ? List.of(Flow.parse(backendFlow[1])) : Flow.ALL) {
        String run = backend.mode() + "-" + UUID.randomUUID().toString().substring(0, 6);
        out.println("Running " + orders + " orders on backend " + backend.mode() + ", flow " + flow.value()
            + (outages.any() ? ", outages: " + outages : "") + " ...");
        Report report = saga(backend, flow, run).run(run, orders);
        out.println("  RocketMQ name server " + platform.rocketmq().nameServerAddress() + ", PostgreSQL "
            + platform.postgres().jdbcUrl() + (backend.onPulsar() ? ", Pulsar " + platform.pulsar().serviceUrl() : "")
            + ", flow " + flow.value());
        report.print(out);
        reports.add(report);
        flows.add(flow);
        ok &= report.consistent();
      }
    }
    return ok;
  }

  /** One run of the saga on {@code backend} in {@code flow}: its topics created, its broker properties and the outages set. */
  private SagaRun saga(Backend backend, Flow flow, String run) {
    Map<String, String> transport = new LinkedHashMap<>(Transport.properties(platform, backend, run));
    transport.put(Flow.PROPERTY, flow.value());
    transport.putAll(properties);
    OutageRun outage = new OutageRun(outages, OutageRun.Servers.of(platform, backend), out);
    String ns = platform.rocketmq().nameServerAddress();
    String url = backend.onPulsar() ? platform.pulsar().serviceUrl() : null;
    return new SagaRun(backend, platform.postgres(), transport,
        () -> backend.onPulsar() ? PulsarInjector.open(url) : RocketMQInjector.open(ns),
        outages.settleTimeout(SETTLE_TIMEOUT), outage, outages.trafficSpread(),
        (b, pg, r, t) -> SagaServices.start(b, pg, r, t, false, spans), true);
  }

  /**
   * Makes every service of the following runs trace into {@code spans} (each its own SDK, resource {@code service.name}
   * = the service's name); null: the services' own configuration ({@code examples.tracing.file}, or the global
   * OpenTelemetry).
   */
  public DemoRunner traceTo(SpanExporter spans) {
    this.spans = spans;
    return this;
  }

  /** The reports of the runs so far. */
  public List<Report> reports() {
    return List.copyOf(reports);
  }

  /** The flow of each report of {@link #reports()}, in the same order. */
  public List<Flow> flows() {
    return List.copyOf(flows);
  }
}
