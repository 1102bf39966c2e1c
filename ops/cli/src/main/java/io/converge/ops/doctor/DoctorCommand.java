package io.converge.ops.doctor;

import io.converge.ops.db.DbOptions;
import io.converge.ops.db.DurationConverter;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code converge doctor}: checks a running deployment against what Converge needs and prints each check as PASS, WARN
 * or FAIL with its fix. Each system is checked only when its options are given: RocketMQ ({@code --namesrv}), Pulsar
 * ({@code --pulsar-url}, {@code --pulsar-admin-url}), PostgreSQL ({@code --jdbc-url}). Reads only. Exit 0 when every
 * check passed, 1 with warnings, 2 with failures, bad options or a check that broke (its error printed).
 */
@Command(name = "doctor", mixinStandardHelpOptions = true, sortOptions = false, description = "Checks a running deployment (RocketMQ, Pulsar, PostgreSQL) against what Converge needs: PASS, WARN or "
    + "FAIL with the fix for each check; exit 0, 1 (warnings) or 2 (failures). Checks only the systems given.")
public final class DoctorCommand implements Callable<Integer> {

  @Spec
  CommandSpec spec;

  @Option(names = "--namesrv", paramLabel = "HOST:PORT[;HOST:PORT]", description = "RocketMQ name servers")
  String nameServer;

  @Option(names = "--topic", paramLabel = "TOPIC", description = "a RocketMQ topic the producers send to (repeatable)")
  List<String> topics = new ArrayList<>();

  @Option(names = "--min-queues", defaultValue = "4", description = "write queues each RocketMQ topic needs (default: ${DEFAULT-VALUE})")
  int minQueues;

  @Option(names = "--local-transaction-timeout", defaultValue = "30s", converter = DurationConverter.class, description = "the producers' local-transaction-timeout (default: ${DEFAULT-VALUE})")
  Duration localTransactionTimeout;

  @Option(names = "--broker-check-window", defaultValue = "450s", converter = DurationConverter.class, description = "the producers' broker-check-window (default: ${DEFAULT-VALUE}, 7.5 min)")
  Duration brokerCheckWindow;

  @Option(names = "--log-retention", defaultValue = "7d", converter = DurationConverter.class, description = "the producers' log-retention (default: ${DEFAULT-VALUE})")
  Duration logRetention;

  @Option(names = "--pulsar-url", paramLabel = "pulsar://HOST:PORT", description = "the Pulsar service URL")
  String pulsarUrl;

  @Option(names = "--pulsar-admin-url", paramLabel = "http://HOST:PORT", description = "the Pulsar admin (web service) URL")
  String pulsarAdminUrl;

  @Option(names = "--pulsar-topic", paramLabel = "TOPIC", description = "a Pulsar topic the producers send to (repeatable)")
  List<String> pulsarTopics = new ArrayList<>();

  /** The database options of the other commands; null when none is given (PostgreSQL is then not checked). */
  @ArgGroup(exclusive = false)
  DbOptions db;

  @Option(names = "--module", paramLabel = "MODULE", description = "a Converge module whose tables must be there "
      + "(producer, pulsar, consumer, idempotency, outbox, cdc; repeatable; default: those found)")
  List<String> modules = new ArrayList<>();

  @Option(names = "--max-slot-wal-mb", defaultValue = "1024", description = "WAL a replication slot may retain (default: ${DEFAULT-VALUE} MB)")
  long maxSlotWalMb;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    String problem = problem();
    if (problem != null) {
      err.println("doctor: " + problem);
      return 2;
    }
    Map<Finding.Status, Integer> counts = new EnumMap<>(Finding.Status.class);
    java.util.function.Consumer<Finding> print = f -> {
      counts.merge(f.status(), 1, Integer::sum);
      out.printf("%-4s  %-40s %s%n", f.status(), f.check(), f.found());
      if (f.fix() != null) {
        out.printf("      fix: %s%n", f.fix());
      }
      out.flush();
    };
    try {
      check(print);
    } catch (RuntimeException e) {
      // a check that broke is a failure, not a warning: the deployment was not checked
      err.println("doctor: FAIL: a check broke, the deployment is not fully checked: " + e);
      e.printStackTrace(err);
      err.flush();
      counts.merge(Finding.Status.FAIL, 1, Integer::sum);
    }
    int warn = counts.getOrDefault(Finding.Status.WARN, 0);
    int fail = counts.getOrDefault(Finding.Status.FAIL, 0);
    out.printf("doctor: %d PASS, %d WARN, %d FAIL%n", counts.getOrDefault(Finding.Status.PASS, 0), warn, fail);
    return fail > 0 ? 2 : warn > 0 ? 1 : 0;
  }

  private void check(java.util.function.Consumer<Finding> print) {
    if (nameServer != null) {
      new RocketMQDoctor(nameServer, new RocketMQRules.Producer(localTransactionTimeout, brokerCheckWindow,
          logRetention), topics, minQueues).run(print);
    }
    if (pulsarUrl != null || pulsarAdminUrl != null) {
      new PulsarDoctor(pulsarUrl, pulsarAdminUrl, pulsarTopics).run(print);
    }
    if (db != null) {
      new PostgresDoctor(dataSource(), maxSlotWalMb * 1024 * 1024, new LinkedHashSet<>(modules))
          .run(print);
    }
  }

  private String problem() {
    String dbProblem = db == null ? null : db.problem();
    if (dbProblem != null) {
      return dbProblem;
    }
    if (!topics.isEmpty() && nameServer == null) {
      return "--topic needs --namesrv";
    }
    if (!pulsarTopics.isEmpty() && pulsarAdminUrl == null) {
      return "--pulsar-topic needs --pulsar-admin-url";
    }
    if (nameServer == null && pulsarUrl == null && pulsarAdminUrl == null && db == null) {
      return "nothing to check: give --namesrv, --pulsar-url/--pulsar-admin-url and/or --jdbc-url";
    }
    if (minQueues < 1 || maxSlotWalMb < 0) {
      return "--min-queues must be at least 1 and --max-slot-wal-mb at least 0, but were " + minQueues + " and "
          + maxSlotWalMb;
    }
    if (localTransactionTimeout.isZero()) {
      return "--local-transaction-timeout must be positive, but was " + localTransactionTimeout;
    }
    return null;
  }

  private PGSimpleDataSource dataSource() {
    PGSimpleDataSource ds = db.dataSource();
    ds.setConnectTimeout(10);
    ds.setLoginTimeout(10);
    return ds;
  }
}
