package io.converge.examples;

import io.converge.broker.DevPlatform;
import io.converge.examples.demo.DemoLogging;
import io.converge.examples.demo.DemoRunner;
import io.converge.examples.demo.Outages;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The demo (README command 1): starts embedded RocketMQ, PostgreSQL and Pulsar, runs the order saga's
 * five services on each backend in turn (rocketmq, outbox, pulsar), drives orders through them with
 * retried and concurrent requests, injected duplicate deliveries and orders that must be compensated,
 * and prints one reconciliation report per backend. Exits 1 when any invariant fails.
 *
 * <p>Arguments: {@code [orders per backend, default 300] [backends, default rocketmq,outbox,pulsar]}, and
 * the options {@code --freeze-db=<duration>} (PostgreSQL frozen with SIGSTOP for that long during each
 * phase's traffic) and {@code --stop-broker=<duration>} (then the phase's broker out for that long:
 * RocketMQ's broker stopped, Pulsar's JVM frozen), durations such as {@code 60s} or {@code 2m}.
 */
public final class Demo {

  private Demo() {
  }

  public static void main(String[] args) throws Exception {
    List<String> positional = new ArrayList<>();
    Outages outages = Outages.NONE;
    for (String a : args) {
      if (a.startsWith("--")) {
        outages = outages.with(a);
      } else {
        positional.add(a);
      }
    }
    int orders = positional.size() > 0 ? Integer.parseInt(positional.get(0)) : 300;
    String backends = positional.size() > 1 ? positional.get(1) : "rocketmq,outbox,pulsar";
    Path log = DemoLogging.toFile();
    PrintStream out = System.out;
    out.println("Converge demo: starting embedded RocketMQ and PostgreSQL (Pulsar in a child JVM when needed) ...");
    out.println(
        "  the servers' and clients' logs: " + log + " (here: the report, and errors of Converge and the services)");
    boolean ok;
    try (DevPlatform platform = DevPlatform.builder().fastTransactionChecks().start()) {
      ok = new DemoRunner(platform, out, outages, Map.of()).run(orders, backends);
    }
    out.println(ok ? "All invariants hold on every backend." : "INVARIANT FAILED");
    out.println("Logs: " + log);
    System.exit(ok ? 0 : 1);
  }
}
