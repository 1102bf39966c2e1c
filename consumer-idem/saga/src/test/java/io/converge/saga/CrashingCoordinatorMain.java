package io.converge.saga;

import io.converge.broker.child.ChildJvm;
import io.converge.consumer.IncomingMessage;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import javax.sql.DataSource;

/**
 * A coordinator in a child JVM ({@link SagaCrashIT}): starts saga {@code args[0]}, lets the participant do the first
 * step, then applies its reply and halts the JVM at the crash point {@code args[1]} of that transition's unit of
 * work (before or after its database commit), as kill -9 would.
 */
public final class CrashingCoordinatorMain {

  private CrashingCoordinatorMain() {
  }

  public static void main(String[] args) throws Exception {
    DataSource ds = ChildJvm.database();
    TxnProducer producer = TxnProducer.builder().group("crash-child").dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
    OrderSaga saga = new OrderSaga(ds, producer, "", null, b -> {
    });
    Mailbox mail = Mailbox.fromNow(ds);
    saga.start(args[0], "");
    saga.deliver(mail.next().get(0));
    IncomingMessage reply = mail.next().get(0);
    CrashPoints.Point at = CrashPoints.Point.valueOf(args[1]);
    CrashPoints.install(p -> {
      if (p == at) {
        ChildJvm.halt("halted at " + p);
      }
    });
    saga.deliver(reply);
    System.exit(3); // not reached: the transition halts the JVM
  }
}
