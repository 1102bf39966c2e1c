package io.converge.examples;

import io.converge.examples.demo.DemoPlatform;
import io.converge.examples.demo.DemoRunner;
import java.io.PrintStream;

/**
 * The demo (README command 1): starts embedded RocketMQ, PostgreSQL and Pulsar, runs the order saga's
 * five services on each backend in turn (rocketmq, outbox, pulsar), drives orders through them with
 * retried and concurrent requests, injected duplicate deliveries and orders that must be compensated,
 * and prints one reconciliation report per backend. Exits 1 when any invariant fails.
 *
 * <p>Arguments: {@code [orders per backend, default 300] [backends, default rocketmq,outbox,pulsar]}.
 */
public final class Demo {

  private Demo() {}

  public static void main(String[] args) throws Exception {
    int orders = args.length > 0 ? Integer.parseInt(args[0]) : 300;
    String backends = args.length > 1 ? args[1] : "rocketmq,outbox,pulsar";
    PrintStream out = System.out;
    out.println("Converge demo: starting embedded RocketMQ and PostgreSQL (Pulsar in a child JVM when needed) ...");
    boolean ok;
    try (DemoPlatform platform = DemoPlatform.start()) {
      ok = new DemoRunner(platform, out).run(orders, backends);
    }
    out.println(ok ? "All invariants hold on every backend." : "INVARIANT FAILED");
    System.exit(ok ? 0 : 1);
  }
}
