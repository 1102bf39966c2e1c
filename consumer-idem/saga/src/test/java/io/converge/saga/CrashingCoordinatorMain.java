package io.converge.saga;

import io.converge.broker.child.ChildJvm;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.rocketmq.RocketMQIdempotentConsumer;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import io.converge.producer.rocketmq.RocketMQBackend;
import javax.sql.DataSource;

/**
 * A coordinator in a child JVM ({@link SagaCrashIT}): starts saga {@code args[0]}, lets the participant do the first
 * step, then applies its reply and halts the JVM at the crash point {@code args[1]} of that transition's unit of
 * work (before or after its database commit), as kill -9 would.
 *
 * <p>Outbox backend (two arguments): the messages are delivered by hand from the outbox table ({@link Mailbox}).
 * RocketMQ half-message backend ({@code args[2]} the name server, {@code args[3]} the topic prefix, {@code args[4]}
 * the producer group): the coordinator and the participants consume through the embedded broker, and the JVM halts
 * when the point is passed on a thread of the coordinator's reply consumer: in the transition on the first reply (the
 * participants' units run on their own consumers' threads, the start on the main thread).
 */
public final class CrashingCoordinatorMain {

  private CrashingCoordinatorMain() {
  }

  public static void main(String[] args) throws Exception {
    DataSource ds = ChildJvm.database();
    CrashPoints.Point at = CrashPoints.Point.valueOf(args[1]);
    if (args.length > 2) {
      halfMessages(ds, args[0], at, args[2], args[3], args[4]);
      return;
    }
    TxnProducer producer = TxnProducer.builder().group("crash-child").dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
    OrderSaga saga = new OrderSaga(ds, producer, "", null, b -> {
    });
    Mailbox mail = Mailbox.fromNow(ds);
    saga.start(args[0], "");
    saga.deliver(mail.next().get(0));
    IncomingMessage reply = mail.next().get(0);
    CrashPoints.install(p -> {
      if (p == at) {
        ChildJvm.halt("halted at " + p);
      }
    });
    saga.deliver(reply);
    System.exit(3); // not reached: the transition halts the JVM
  }

  private static void halfMessages(DataSource ds, String id, CrashPoints.Point at, String nameServer, String prefix,
      String group) throws Exception {
    TxnProducer producer = TxnProducer.builder().group(group).dataSource(ds)
        .backend(RocketMQBackend.nameServer(nameServer)).topics(SagaCrashIT.topics(prefix).toArray(String[]::new))
        .build();
    OrderSaga saga = new OrderSaga(ds, producer, prefix, null, b -> {
    });
    String replyThreads = group + "-replies_"; // RocketMQ's ConsumeMessageThread_<group>_... of the reply consumer
    CrashPoints.install(p -> {
      String thread = Thread.currentThread().getName();
      System.out.println("passing " + p + " on " + thread);
      if (p == at && thread.contains(replyThreads)) {
        ChildJvm.halt("halted at " + p);
      }
    });
    consume(nameServer, prefix + OrderSaga.REPLIES, saga.coordinator.replyHandler(), group + "-replies");
    // only what the saga reaches before the crash: fewer consumers, a faster start
    String first = prefix + "inventory-cmd";
    consume(nameServer, first, saga.participants.get(first), group + "-inventory");
    saga.start(id, "");
    Thread.sleep(60_000);
    System.exit(3); // not reached: the transition halts the JVM
  }

  private static void consume(String nameServer, String topic, IdempotentHandler handler, String group) {
    RocketMQIdempotentConsumer.builder().nameServer(nameServer).topic(topic).group(group).handler(handler).start();
  }
}
