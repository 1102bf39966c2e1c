package io.converge.saga;

import io.converge.broker.child.ChildJvm;
import io.converge.outbox.OutboxBackend;
import io.converge.producer.TxnProducer;
import io.converge.producer.internal.CrashPoints;
import java.net.URI;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A TCC coordinator in a child JVM ({@link TccCrashIT}): starts global transaction {@code args[0]} of two branches,
 * "account" (messages, its participant here) and "points" (HTTP at {@code args[1]}, served by the test). The Try of
 * account succeeds; the Try of points is recorded ({@code SENT}), called and succeeds at the participant; the JVM
 * halts (as kill -9 would) just before the answer's transition commits: every Try is done, no decision is recorded.
 */
public final class CrashingTccCoordinatorMain {

  private CrashingTccCoordinatorMain() {
  }

  static TccDefinition<String> definition(URI base) {
    return TccDefinition.builder("crash-transfer", SagaCodec.json())
        .branch("account", b -> b.messages("account-tcc").timeout(Duration.ofSeconds(1)))
        .branch("points", b -> b.http(base.resolve("/points")).timeout(Duration.ofSeconds(1)))
        .globalTimeout(Duration.ofMinutes(1)).build();
  }

  public static void main(String[] args) throws Exception {
    DataSource ds = ChildJvm.database();
    TxnProducer producer = TxnProducer.builder().group("tcc-crash-child").dataSource(ds)
        .backend(OutboxBackend.outbox()).build();
    TccDefinition<String> def = definition(URI.create(args[1]));
    SagaCoordinator coordinator = SagaCoordinator.builder().producer(producer).tcc(def)
        .replyTopic(TccTestParticipant.REPLIES).build();
    TccTestParticipant participant = new TccTestParticipant(ds, producer);
    Mailbox mail = Mailbox.fromNow(ds);
    coordinator.start(def, args[0], "{}");
    participant.handle(mail.next().get(0)); // the Try of account
    coordinator.replyHandler().handle(mail.next().get(0)); // its reply: the Try of points is due (HTTP: the poll)
    CrashPoints.install(p -> {
      if (p == CrashPoints.Point.BEFORE_DB_COMMIT
          && Thread.currentThread().getName().startsWith("converge-saga-http")) {
        ChildJvm.halt("halted before the answer of the Try of points committed");
      }
    });
    coordinator.poll();
    System.exit(3); // not reached: the answer's transition halts the JVM
  }
}
