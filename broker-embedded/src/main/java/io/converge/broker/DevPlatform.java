package io.converge.broker;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A development platform in one process: RocketMQ name server + broker, PostgreSQL, and Pulsar on
 * request, started together, their addresses printed, stopped cleanly on Ctrl-C (SIGINT/SIGTERM).
 *
 * <p>Run it with {@code converge dev [--pulsar]} (module ops), or its {@link #main(String[])}.
 */
public final class DevPlatform implements AutoCloseable {

  private final EmbeddedRocketMQ rocketmq;
  private final ConvergePostgres postgres;
  private final EmbeddedPulsar pulsar;

  private DevPlatform(EmbeddedRocketMQ rocketmq, ConvergePostgres postgres, EmbeddedPulsar pulsar) {
    this.rocketmq = rocketmq;
    this.postgres = postgres;
    this.pulsar = pulsar;
  }

  /**
   * Starts the servers; when one fails, those already started are stopped before the error is thrown.
   *
   * @param withPulsar whether to start Pulsar too (a child JVM, 12-45 s)
   */
  public static DevPlatform start(boolean withPulsar) {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().autoCreateTopics(true).build().start();
      started.add(mq);
      ConvergePostgres pg = ConvergePostgres.shared();
      started.add(pg);
      EmbeddedPulsar pulsar = withPulsar ? EmbeddedPulsar.builder().build().start() : null;
      return new DevPlatform(mq, pg, pulsar);
    } catch (RuntimeException e) {
      for (int i = started.size() - 1; i >= 0; i--) {
        try {
          started.get(i).close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** Prints the addresses a client needs. */
  public void describe(PrintStream out) {
    out.println("RocketMQ name server : " + rocketmq.nameServerAddress() + "   (converge.rocketmq.name-server)");
    out.println("RocketMQ broker      : " + rocketmq.brokerAddress() + " (topics are created on first send)");
    out.println("PostgreSQL JDBC URL  : " + postgres.jdbcUrl() + "   user " + postgres.user() + "   (converge.jdbc.url)");
    if (pulsar != null) {
      out.println("Pulsar service URL   : " + pulsar.serviceUrl() + "   (converge.pulsar.service-url)");
      out.println("Pulsar admin URL     : " + pulsar.httpUrl());
    }
  }

  /** The RocketMQ server. */
  public EmbeddedRocketMQ rocketmq() {
    return rocketmq;
  }

  /** The PostgreSQL server. */
  public ConvergePostgres postgres() {
    return postgres;
  }

  /** The Pulsar server, or null when not requested. */
  public EmbeddedPulsar pulsar() {
    return pulsar;
  }

  /** Stops every server, Pulsar first. Idempotent. */
  @Override
  public void close() {
    if (pulsar != null) {
      pulsar.stop();
    }
    rocketmq.stop();
    postgres.close();
  }

  /**
   * Starts the platform and waits for Ctrl-C.
   *
   * @param args {@code --pulsar} to start Pulsar too
   */
  public static void main(String[] args) throws InterruptedException {
    boolean withPulsar = List.of(args).contains("--pulsar");
    System.out.println("Starting the Converge dev platform" + (withPulsar ? " with Pulsar" : "") + " ...");
    DevPlatform platform = start(withPulsar);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      System.out.println("Stopping the Converge dev platform ...");
      platform.close();
      stopped.countDown();
    }, "converge-dev-stop"));
    platform.describe(System.out);
    System.out.println("Ready. Press Ctrl-C to stop.");
    stopped.await();
  }
}
