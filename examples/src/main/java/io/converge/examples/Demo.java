package io.converge.examples;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import java.io.PrintStream;
import javax.sql.DataSource;

/**
 * The demo (README command 1): starts embedded RocketMQ and PostgreSQL, drives orders through a
 * transactional publish (some of which roll back), consumes them, and prints a reconciliation
 * report. Exits 1 when an invariant fails.
 */
public final class Demo {

  private Demo() {}

  /** Runs the demo with 200 orders, or the number given as first argument. */
  public static void main(String[] args) throws Exception {
    int orders = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    PrintStream out = System.out;
    out.println("Converge demo: starting embedded RocketMQ and PostgreSQL ...");
    boolean ok;
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().fastTransactionChecks().build().start();
    try (ConvergePostgres pg = ConvergePostgres.shared()) {
      out.println("  RocketMQ name server " + mq.nameServerAddress() + ", PostgreSQL " + pg.jdbcUrl());
      DataSource db = pg.newSchema("demo");
      OrderFlow.Report report = new OrderFlow(mq, db).run(orders);
      report.print(out);
      ok = report.consistent();
    } finally {
      mq.stop();
    }
    out.println(ok ? "All invariants hold." : "INVARIANT FAILED");
    System.exit(ok ? 0 : 1);
  }
}
