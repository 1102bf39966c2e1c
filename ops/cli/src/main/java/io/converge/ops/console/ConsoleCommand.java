package io.converge.ops.console;

import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.converge.console.web.Console;
import io.converge.console.web.ConsoleHttpServer;
import io.converge.console.web.Html;
import io.converge.ops.db.DbCommand;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code converge console}: the web console of everything stuck, served on this host (loopback by default)
 * against the database of the options, until Ctrl-C. Every decision taken in it is audited as
 * {@code --operator} (default: the OS user). Exit 1 when the database or the address fails at start, 2 on a
 * bad option.
 */
@Command(name = "console", description = "Serve the web console of everything stuck (parked keys, dead letters, tickets, open transactions,"
    + " in-progress keys, entity states) with audited actions, until Ctrl-C.")
public final class ConsoleCommand extends DbCommand {

  @Option(names = "--port", defaultValue = "8089", description = "the port (0: a free one; default ${DEFAULT-VALUE})")
  int port;

  @Option(names = "--bind", defaultValue = "127.0.0.1", description = "the address to listen on (default ${DEFAULT-VALUE}: this host only;"
      + " the console has no login)")
  String bind;

  @Option(names = "--operator", description = "who the decisions are recorded as (default: the OS user)")
  String operator;

  @Option(names = "--threshold", paramLabel = "KIND=AGE", description = "when an item of a kind is stuck, e.g. outbox-parked=2m;"
      + " repeatable (defaults: 1m, 5m for pulsar-txn, idempotency-key, state, saga)")
  Map<String, String> thresholds = new LinkedHashMap<>();

  @Override
  protected String problem() {
    if (port < 0 || port > 65_535) {
      return "--port must be between 0 and 65535, but was " + port;
    }
    if (operator() == null) {
      return "--operator must name who takes the decisions (no OS user is known)";
    }
    try {
      stuckThresholds();
    } catch (IllegalArgumentException e) {
      return "--threshold: " + e.getMessage();
    }
    return super.problem();
  }

  private String operator() {
    String who = operator != null ? operator : System.getProperty("user.name");
    return who == null || who.isBlank() ? null : who.strip();
  }

  private StuckThresholds stuckThresholds() {
    StuckThresholds t = StuckThresholds.defaults();
    for (Map.Entry<String, String> e : thresholds.entrySet()) {
      StuckKind kind;
      try {
        kind = StuckKind.ofSlug(e.getKey());
      } catch (IllegalArgumentException unknown) {
        throw new IllegalArgumentException("the kind is one of " + java.util.Arrays.stream(StuckKind.values())
            .map(StuckKind::slug).toList() + ", but was " + e.getKey(), unknown);
      }
      t = t.with(kind, Html.parseAge(e.getValue()));
    }
    return t;
  }

  @Override
  protected int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    Console console = Console.builder().dataSource(dataSource).thresholds(stuckThresholds()).build();
    ConsoleHttpServer server;
    try {
      server = ConsoleHttpServer.start(console, new InetSocketAddress(bind, port), operator());
    } catch (UncheckedIOException e) {
      err.println(name() + " failed: " + e.getMessage() + " (" + e.getCause().getMessage() + ")");
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      stopped.countDown();
    }, "converge-console-stop"));
    out.println("Converge console on " + server.url() + " (decisions recorded as " + operator() + "); Ctrl-C stops it");
    out.flush();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.close();
    }
    return 0;
  }

}
