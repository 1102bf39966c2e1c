package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.pulsar.EmbeddedPulsar;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.examples.events.Topics;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The embedded servers of the demo: RocketMQ (name server + broker in this JVM), PostgreSQL, and,
 * when a run needs it, Pulsar in a child JVM (its broker never shares a class path with RocketMQ's).
 */
public final class DemoPlatform implements AutoCloseable {

  private final EmbeddedRocketMQ mq;
  private final ConvergePostgres pg;
  private final boolean owned;
  private EmbeddedPulsar pulsar;

  private DemoPlatform(EmbeddedRocketMQ mq, ConvergePostgres pg, boolean owned) {
    this.mq = mq;
    this.pg = pg;
    this.owned = owned;
  }

  /** Starts RocketMQ and PostgreSQL; Pulsar starts on the first Pulsar run. */
  public static DemoPlatform start() {
    EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().fastTransactionChecks().build().start();
    try {
      return new DemoPlatform(mq, ConvergePostgres.shared(), true);
    } catch (RuntimeException e) {
      mq.stop();
      throw e;
    }
  }

  /** Wraps servers a test extension already started (they are not stopped by {@link #close()}). */
  public static DemoPlatform of(EmbeddedRocketMQ mq, ConvergePostgres pg, EmbeddedPulsar pulsar) {
    DemoPlatform p = new DemoPlatform(mq, pg, false);
    p.pulsar = pulsar;
    return p;
  }

  /** One run of the saga on {@code backend}, with its topics created and its broker properties set. */
  SagaRun saga(Backend backend, String run, Duration settleTimeout) {
    return saga(backend, run, settleTimeout, Map.of(), Outages.NONE, System.out);
  }

  /**
   * As {@link #saga(Backend, String, Duration)}, with {@code properties} added to every service's
   * configuration and {@code outages} played during the traffic (their log lines on {@code out}).
   */
  SagaRun saga(Backend backend, String run, Duration settleTimeout, Map<String, String> properties, Outages outages,
               PrintStream out) {
    Map<String, String> transport = transport(backend, run);
    transport.putAll(properties);
    OutageRun outage = new OutageRun(outages, servers(backend), out);
    if (backend.onPulsar()) {
      String url = pulsar().serviceUrl();
      return new SagaRun(backend, pg, transport, () -> PulsarInjector.open(url), outages.settleTimeout(settleTimeout),
          outage, outages.trafficSpread());
    }
    String ns = mq.nameServerAddress();
    return new SagaRun(backend, pg, transport, () -> RocketMQInjector.open(ns), outages.settleTimeout(settleTimeout), outage,
        outages.trafficSpread());
  }

  /** What the outages of a {@code backend} phase act on: PostgreSQL, and the phase's broker. */
  private OutageRun.Servers servers(Backend backend) {
    return new OutageRun.Servers() {
      @Override
      public void freezeDb() {
        pg.freeze();
      }

      @Override
      public void thawDb() {
        pg.thaw();
      }

      @Override
      public String brokerDown() {
        if (backend.onPulsar()) {
          pulsar().freeze();
          return "Pulsar frozen (SIGSTOP of its JVM)";
        }
        mq.stopBroker();
        return "RocketMQ broker stopped";
      }

      @Override
      public void brokerUp() {
        if (backend.onPulsar()) {
          pulsar().thaw();
        } else if (!mq.isBrokerRunning()) {
          mq.startBroker();
        }
      }
    };
  }

  /** The {@code converge.*} broker properties of {@code backend}; creates run {@code run}'s RocketMQ topics. */
  Map<String, String> transport(Backend backend, String run) {
    Map<String, String> transport = new LinkedHashMap<>();
    if (backend.onPulsar()) {
      transport.putAll(PulsarTransport.properties(pulsar().serviceUrl()));
      return transport;
    }
    for (String topic : new Topics("-" + run).all()) {
      mq.createTopic(topic);
    }
    String ns = mq.nameServerAddress();
    transport.put("converge.producer.name-server", ns);
    transport.put("converge.outbox.name-server", ns);
    transport.put("converge.consumer.rocketmq.name-server", ns);
    return transport;
  }

  /** The PostgreSQL server. */
  ConvergePostgres postgres() {
    return pg;
  }

  /** Prints where the servers listen. */
  void describe(PrintStream out) {
    out.println("  RocketMQ name server " + mq.nameServerAddress() + ", PostgreSQL " + pg.jdbcUrl()
        + (pulsar != null ? ", Pulsar " + pulsar.serviceUrl() : ""));
  }

  private synchronized EmbeddedPulsar pulsar() {
    if (pulsar == null) {
      pulsar = EmbeddedPulsar.builder().build().start();
    }
    return pulsar;
  }

  @Override
  public synchronized void close() {
    if (!owned) {
      return;
    }
    try {
      if (pulsar != null) {
        pulsar.close();
      }
    } finally {
      mq.stop();
    }
  }
}
