package io.converge.testing;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.broker.child.ChildJvm;
import io.converge.core.BrokerUnavailableException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import java.sql.PreparedStatement;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The producing process of a crash test: runs one unit of work (a business row and one message) and
 * halts the JVM ({@code Runtime.halt}, no shutdown hooks, like kill -9) at the crash point named by
 * the system property {@code converge.child.crash}. Exits 3 if the point was never reached.
 */
public final class ChildProducerMain {

  /** Printed just before the halt. */
  public static final String HALTING = "CHILD-HALTING-AT ";
  /** System properties the test passes (the database comes through {@link ChildJvm.Builder#database}). */
  static final String CRASH = "converge.child.crash", FACTORY = "converge.child.factory",
      GROUP = "converge.child.group",
      TOPIC = "converge.child.topic", ID = "converge.child.id", ENV = "converge.child.env.";

  private ChildProducerMain() {
  }

  public static void main(String[] args) throws Exception {
    CrashPoints.Point crash = CrashPoints.Point.valueOf(System.getProperty(CRASH));
    DataSource db = ChildJvm.database();
    Map<String, String> env = new HashMap<>();
    System.getProperties().stringPropertyNames().stream()
        .filter(k -> k.startsWith(ENV))
        .forEach(k -> env.put(k.substring(ENV.length()), System.getProperty(k)));
    String group = System.getProperty(GROUP);
    String topic = System.getProperty(TOPIC);
    String id = System.getProperty(ID);
    ChildProducerFactory factory = (ChildProducerFactory) Class.forName(System.getProperty(FACTORY))
        .getDeclaredConstructor().newInstance();
    TxnProducer producer = start(factory, group, topic, db, env);
    CrashPoints.install(point -> {
      if (point == crash) {
        ChildJvm.halt(HALTING + point);
      }
    });
    // a trace is current (the process's own tracing is the no-op default): the message carries its context
    try (Scope ignored = Span.wrap(SpanContext.createFromRemoteParent(id.replace("-", ""),
        id.replace("-", "").substring(16), TraceFlags.getSampled(), TraceState.getDefault())).makeCurrent()) {
      producer.inTransaction(tx -> {
        try (PreparedStatement ps = tx.connection().prepareStatement(TxnProducerContract.INSERT_ORDER)) {
          ps.setString(1, id);
          ps.setString(2, "crash-" + crash);
          ps.executeUpdate();
        }
        return tx.publish(
            OutgoingMessage.builder(topic).id(id).key(id).payload(("order " + id).getBytes(UTF_8)).build());
      });
    }
    System.out.println("CHILD-COMPLETED without reaching " + crash);
    producer.close();
    System.exit(3);
  }

  /** The {@code traceparent} current when the child publishes message {@code id} (made of the id's hex digits). */
  static String traceparent(String id) {
    String hex = id.replace("-", "");
    return "00-" + hex + "-" + hex.substring(16) + "-01";
  }

  /**
   * The producer, retried for up to {@link #START_DEADLINE} while the broker does not answer: a child
   * started while the test JVM (which hosts the broker) is busy may see its first route lookup time out.
   * Nothing is published before the producer has started, so a retry changes nothing the test observes.
   */
  private static TxnProducer start(ChildProducerFactory factory, String group, String topic, DataSource db,
      Map<String, String> env) throws InterruptedException {
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    while (true) {
      try {
        return factory.create(group, topic, db, env);
      } catch (BrokerUnavailableException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        System.out.println("CHILD-RETRYING the producer's start: " + e.getMessage());
        Thread.sleep(200);
      }
    }
  }

  /** How long the child retries starting its producer while the broker does not answer. */
  static final java.time.Duration START_DEADLINE = java.time.Duration.ofSeconds(30);
}
