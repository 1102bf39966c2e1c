package io.converge.consumer.rocketmq;

import io.converge.broker.child.ChildJvm;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.Outcome;
import javax.sql.DataSource;

/**
 * The consuming process of {@link ConsumerKillIT}: processes one message through the RocketMQ binding
 * and halts the JVM ({@code Runtime.halt}, like kill -9) right after the handler's transaction
 * committed and before the binding acks it; probe messages (id {@value #PROBE}...) only show that it consumes.
 */
public final class KilledConsumerMain {

  /** Printed once the binding is started. */
  static final String READY = "READY";
  /** The id prefix of a probe message: processed and acked, then printed with {@link #PROBED}. */
  static final String PROBE = "probe-";
  /** Printed with a probe's id: the binding consumes (its rebalance took the queues). */
  static final String PROBED = "PROBED ";
  /** Printed with the message id and the outcome just before the halt. */
  static final String COMMITTED = "COMMITTED ";
  /** System properties the test passes (the database comes through {@link ChildJvm.Builder#database}). */
  static final String GROUP = "kill.group", TOPIC = "kill.topic", NAME_SERVER = "kill.nameServer";

  private KilledConsumerMain() {
  }

  public static void main(String[] args) throws Exception {
    DataSource db = ChildJvm.database();
    IdempotentHandler haltAfterCommit = KillLedger.handler(System.getProperty(GROUP), db, (real, message) -> {
      Outcome outcome = real.handle(message); // the dedup claim and the handler's row are committed here
      if (message.envelopeMessageId().startsWith(PROBE)) {
        ChildJvm.mark(PROBED + message.envelopeMessageId()); // the binding holds the queues: acked normally
        return outcome;
      }
      ChildJvm.halt(COMMITTED + message.envelopeMessageId() + " " + outcome); // before the binding returns: no ack
      return outcome;
    });
    RocketMQIdempotentConsumer.builder().nameServer(System.getProperty(NAME_SERVER))
        .topic(System.getProperty(TOPIC)).handler(haltAfterCommit)
        // concurrent: an orderly consumer killed here would keep its queues locked on the broker for 60 s
        // (documented); the heir, orderly, would wait that long for the redelivery under test
        .ordered(false).start();
    ChildJvm.mark(READY);
    Thread.sleep(120_000); // keeps the JVM alive until the message halts it
    System.out.println("NO MESSAGE");
    System.exit(3);
  }
}
