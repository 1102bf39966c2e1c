package io.converge.saga;

import io.converge.broker.child.ChildJvm;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * A coordinator in a child JVM ({@link SagaCrashIT}, {@link SagaCrashContract}): starts saga {@code args[0]}, lets the
 * participant do the first step, then applies its reply and halts the JVM at the crash point {@code args[1]} of that
 * transition's unit of work (before or after its database commit), as kill -9 would.
 *
 * <p>Outbox backend (two arguments): the messages are delivered by hand from the outbox table ({@link Mailbox}).
 * A broker backend ({@code args[2]} the {@link SagaCrashBackend} class, {@code args[3]} the topic prefix,
 * {@code args[4]} the producer group, the backend's addresses in the system properties {@link #ENV}{@code *}): the
 * coordinator and the participants consume through the broker, and the JVM halts when the point is passed inside
 * the coordinator's reply handler (the participants' units run on their own consumers' threads, the start on the
 * main thread).
 */
public final class CrashingCoordinatorMain {

  /** The prefix of the system properties that carry the backend's environment. */
  static final String ENV = "converge.saga.env.";

  private static final ThreadLocal<Boolean> IN_REPLY = ThreadLocal.withInitial(() -> false);

  private CrashingCoordinatorMain() {
  }

  public static void main(String[] args) throws Exception {
    DataSource ds = ChildJvm.database();
    CrashPoints.Point at = CrashPoints.Point.valueOf(args[1]);
    if (args.length > 2) {
      broker(ds, args[0], at, args[2], args[3], args[4]);
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

  private static void broker(DataSource ds, String id, CrashPoints.Point at, String backendClass, String prefix,
      String group) throws Exception {
    SagaCrashBackend backend = (SagaCrashBackend) Class.forName(backendClass).getDeclaredConstructor().newInstance();
    Map<String, String> env = new HashMap<>();
    System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith(ENV))
        .forEach(k -> env.put(k.substring(ENV.length()), System.getProperty(k)));
    TxnProducer producer = backend.producer(group, ds, SagaCrashContract.topics(prefix), env);
    OrderSaga saga = new OrderSaga(ds, producer, prefix, null, b -> {
    });
    CrashPoints.install(p -> {
      System.out
          .println("passing " + p + " on " + Thread.currentThread().getName() + ", in a reply: " + IN_REPLY.get());
      if (p == at && IN_REPLY.get()) {
        ChildJvm.halt("halted at " + p);
      }
    });
    backend.consume(prefix + OrderSaga.REPLIES, group + "-replies", inReply(saga.coordinator.replyHandler()), env);
    // only what the saga reaches before the crash: fewer consumers, a faster start
    String first = prefix + "inventory-cmd";
    backend.consume(first, group + "-inventory", saga.participants.get(first), env);
    saga.start(id, "");
    Thread.sleep(60_000);
    System.exit(3); // not reached: the transition halts the JVM
  }

  /** {@code h}, marking its thread while it runs, so that the crash hook tells the coordinator's units apart. */
  private static IdempotentHandler inReply(IdempotentHandler h) {
    return ForwardingIdempotentHandler.around(h, message -> {
      IN_REPLY.set(true);
      try {
        return h.handle(message);
      } finally {
        IN_REPLY.set(false);
      }
    });
  }

}
