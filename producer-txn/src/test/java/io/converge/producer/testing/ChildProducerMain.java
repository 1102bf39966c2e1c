package io.converge.producer.testing;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.CrashPoints;
import java.sql.PreparedStatement;
import java.util.HashMap;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The producing process of a crash test: runs one unit of work (a business row and one message) and
 * halts the JVM ({@code Runtime.halt}, no shutdown hooks, like kill -9) at the crash point named by
 * the system property {@code converge.child.crash}. Exits 3 if the point was never reached.
 */
public final class ChildProducerMain {

  /** Printed just before the halt. */
  public static final String HALTING = "CHILD-HALTING-AT ";

  private ChildProducerMain() {}

  public static void main(String[] args) throws Exception {
    CrashPoints.Point crash = CrashPoints.Point.valueOf(System.getProperty("converge.child.crash"));
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setUrl(System.getProperty("converge.child.jdbc.url"));
    db.setUser(System.getProperty("converge.child.jdbc.user"));
    db.setPassword(System.getProperty("converge.child.jdbc.password", ""));
    db.setCurrentSchema(System.getProperty("converge.child.schema"));
    Map<String, String> env = new HashMap<>();
    System.getProperties().stringPropertyNames().stream()
        .filter(k -> k.startsWith("converge.child.env."))
        .forEach(k -> env.put(k.substring("converge.child.env.".length()), System.getProperty(k)));
    String group = System.getProperty("converge.child.group");
    String topic = System.getProperty("converge.child.topic");
    String id = System.getProperty("converge.child.id");
    ChildProducerFactory factory = (ChildProducerFactory) Class.forName(System.getProperty("converge.child.factory"))
        .getDeclaredConstructor().newInstance();
    TxnProducer producer = factory.create(group, topic, db, env);
    CrashPoints.install(point -> {
      if (point == crash) {
        System.out.println(HALTING + point);
        System.out.flush();
        Runtime.getRuntime().halt(137);
      }
    });
    producer.inTransaction(tx -> {
      try (PreparedStatement ps = tx.connection().prepareStatement(TxnProducerContract.INSERT_ORDER)) {
        ps.setString(1, id);
        ps.setString(2, "crash-" + crash);
        ps.executeUpdate();
      }
      return tx.publish(OutgoingMessage.builder(topic).id(id).key(id).payload(("order " + id).getBytes(UTF_8)).build());
    });
    System.out.println("CHILD-COMPLETED without reaching " + crash);
    producer.close();
    System.exit(3);
  }
}
