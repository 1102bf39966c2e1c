package io.converge.broker;

import io.converge.broker.internal.Closeables;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

/**
 * The embedded servers in one holder: RocketMQ (name server + broker in this JVM), PostgreSQL (the
 * JVM's {@link ConvergePostgres#shared()}: embedded with fsync on, or external when
 * {@code converge.jdbc.url} is set), and Pulsar in its own child JVM (its broker never shares a class
 * path with RocketMQ's), started with the platform or on first {@link #pulsar()}. Used by
 * {@code converge dev}, {@code converge bench} and the examples' demo.
 *
 * <p>Thread-safe. Run it with {@code converge dev [--pulsar]} (module ops), or its {@link #main(String[])}.
 */
public final class DevPlatform implements AutoCloseable {

  private final EmbeddedRocketMQ rocketmq;
  private final ConvergePostgres postgres;
  private final boolean owned;
  private final boolean autoCreateTopics;
  private EmbeddedPulsar pulsar;
  private boolean pulsarOwned;

  private DevPlatform(EmbeddedRocketMQ rocketmq, ConvergePostgres postgres, EmbeddedPulsar pulsar, boolean owned,
      boolean autoCreateTopics) {
    this.rocketmq = rocketmq;
    this.postgres = postgres;
    this.pulsar = pulsar;
    this.owned = owned;
    this.autoCreateTopics = autoCreateTopics;
  }

  /** A builder of a platform that starts its own servers. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The platform of {@code converge dev}: RocketMQ creating topics on first send, PostgreSQL, and
   * Pulsar when {@code withPulsar}. When one server fails, those already started are stopped first.
   *
   * @param withPulsar whether to start Pulsar now (a child JVM, 12-45 s)
   */
  public static DevPlatform start(boolean withPulsar) {
    return builder().autoCreateTopics().startPulsar(withPulsar).start();
  }

  /**
   * Wraps servers started elsewhere, e.g. by the JUnit extensions: {@link #close()} leaves them running.
   *
   * @param pulsar the Pulsar server, or null to start one on the first {@link #pulsar()} (then stopped on close)
   */
  public static DevPlatform of(EmbeddedRocketMQ rocketmq, ConvergePostgres postgres, EmbeddedPulsar pulsar) {
    return new DevPlatform(rocketmq, postgres, pulsar, false, false);
  }

  /** The RocketMQ server. */
  public EmbeddedRocketMQ rocketmq() {
    return rocketmq;
  }

  /** The PostgreSQL server. */
  public ConvergePostgres postgres() {
    return postgres;
  }

  /** The Pulsar server (a child JVM), started on the first call when not running yet. */
  public synchronized EmbeddedPulsar pulsar() {
    if (pulsar == null) {
      pulsar = EmbeddedPulsar.builder().build().start();
      pulsarOwned = true;
    }
    return pulsar;
  }

  /** A new RocketMQ topic, {@code prefix} and a random suffix, created on the broker. */
  public String newTopic(String prefix) {
    String topic = unique(prefix);
    rocketmq.createTopic(topic);
    return topic;
  }

  /** A new Pulsar topic name, {@code prefix} and a random suffix (the broker creates it on first use). */
  public String newPulsarTopic(String prefix) {
    return unique(prefix);
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Prints the addresses a client needs, with the property each goes in. */
  public synchronized void describe(PrintStream out) {
    out.println("RocketMQ name server : " + rocketmq.nameServerAddress()
        + "   (converge.producer.name-server, converge.outbox.name-server, converge.consumer.rocketmq.name-server)");
    out.println("RocketMQ broker      : " + rocketmq.brokerAddress()
        + (autoCreateTopics ? " (topics are created on first send)" : ""));
    out.println(
        "PostgreSQL JDBC URL  : " + postgres.jdbcUrl() + "   user " + postgres.user() + "   (converge.jdbc.url)");
    if (pulsar != null) {
      out.println("Pulsar service URL   : " + pulsar.serviceUrl() + "   (converge.pulsar.service-url)");
      out.println("Pulsar admin URL     : " + pulsar.httpUrl());
    }
  }

  /**
   * Stops the servers this platform started, Pulsar first (for {@link #of}, only a Pulsar it started
   * itself). PostgreSQL is the JVM's {@link ConvergePostgres#shared()} instance, which other platforms and tests
   * of this JVM use too: it is left running and stops when the JVM exits. Idempotent.
   */
  @Override
  public synchronized void close() {
    List<AutoCloseable> servers = new ArrayList<>();
    if (pulsar != null && pulsarOwned) {
      servers.add(pulsar);
    }
    if (owned) {
      servers.add(rocketmq);
      // not postgres: ConvergePostgres.shared() is this JVM's, closed by its shutdown hook (closing it here left a
      // dead server to the next platform of the JVM: the bench's ITs, one after another)
    }
    Exception failure = Closeables.closeAll(servers, null);
    if (failure != null) {
      throw failure instanceof RuntimeException r ? r
          : new EmbeddedServerException("Cannot stop the dev platform's servers: " + failure, failure);
    }
  }

  /** How to start a {@link DevPlatform}. Not thread-safe. */
  public static final class Builder {

    private boolean autoCreateTopics;
    private boolean fastTransactionChecks;
    private boolean startPulsar;

    private Builder() {
    }

    /** RocketMQ creates a topic on its first send (default: topics are created with {@link DevPlatform#newTopic}). */
    public Builder autoCreateTopics() {
      this.autoCreateTopics = true;
      return this;
    }

    /** RocketMQ checks back unresolved half messages within seconds instead of a minute (benchmarks, the demo). */
    public Builder fastTransactionChecks() {
      this.fastTransactionChecks = true;
      return this;
    }

    /** Whether Pulsar starts with the platform (default false: on the first {@link DevPlatform#pulsar()}). */
    public Builder startPulsar(boolean now) {
      this.startPulsar = now;
      return this;
    }

    /** Starts the servers; when one fails, those already started are stopped before the error is thrown. */
    public DevPlatform start() {
      EmbeddedRocketMQ.Builder mq = EmbeddedRocketMQ.builder().autoCreateTopics(autoCreateTopics);
      if (fastTransactionChecks) {
        mq.fastTransactionChecks();
      }
      EmbeddedRocketMQ rocketmq = mq.build().start();
      DevPlatform platform = null;
      try {
        platform = new DevPlatform(rocketmq, ConvergePostgres.shared(), null, true, autoCreateTopics);
        if (startPulsar) {
          platform.pulsar();
        }
        return platform;
      } catch (RuntimeException e) {
        Closeables.closeAll(platform != null ? List.of(platform) : List.of(rocketmq), e);
        throw e;
      }
    }
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
