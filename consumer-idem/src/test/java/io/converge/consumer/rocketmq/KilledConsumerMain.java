package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import java.sql.PreparedStatement;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The consuming process of {@link ConsumerKillIT}: processes one message through the RocketMQ binding
 * and halts the JVM ({@code Runtime.halt}, like kill -9) right after the handler's transaction
 * committed and before the binding acks it.
 */
public final class KilledConsumerMain {

  private KilledConsumerMain() {}

  public static void main(String[] args) throws Exception {
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setUrl(System.getProperty("kill.jdbc.url"));
    db.setUser(System.getProperty("kill.jdbc.user"));
    db.setPassword(System.getProperty("kill.jdbc.password", ""));
    db.setCurrentSchema(System.getProperty("kill.schema"));
    IdempotentHandler real = IdempotentHandler.builder().group(System.getProperty("kill.group")).dataSource(db)
        .handler((c, m) -> {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO kill_ledger (message_id) VALUES (?)")) {
            ps.setString(1, m.envelopeMessageId());
            ps.executeUpdate();
          }
        }).build();
    IdempotentHandler haltAfterCommit = new IdempotentHandler() {
      @Override
      public Outcome handle(IncomingMessage message) {
        Outcome outcome = real.handle(message); // the dedup claim and the handler's row are committed here
        System.out.println("COMMITTED " + message.envelopeMessageId() + " " + outcome);
        System.out.flush();
        Runtime.getRuntime().halt(137); // before the binding returns: no ack reaches the broker
        return outcome;
      }

      @Override
      public Outcome resume(long dlqId) {
        return real.resume(dlqId);
      }

      @Override
      public String group() {
        return real.group();
      }
    };
    RocketMQIdempotentConsumer.builder().nameServer(System.getProperty("kill.nameServer"))
        .topic(System.getProperty("kill.topic")).handler(haltAfterCommit).start();
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(120_000);
    System.out.println("NO MESSAGE");
    System.exit(3);
  }
}
