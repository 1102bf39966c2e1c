package io.converge.ops.doctor;

import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckKind;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The stuck-items check of {@code converge doctor}: per kind of {@link StuckKind} (units, transactions, outbox rows,
 * dead letters, tickets, keys, entity states), the items past their threshold, counted by the console's
 * {@link Inspector} with its default thresholds. A kind whose table is not in the schema has none. Stateless.
 */
final class StuckItems {

  private StuckItems() {
  }

  /** Counts the stuck items in {@code dataSource}: one WARN per kind that has some, else one PASS. */
  static void check(DataSource dataSource, Consumer<Finding> out) {
    Inspector inspector = Inspector.of(dataSource);
    List<String> clear = new ArrayList<>();
    for (StuckKind kind : StuckKind.values()) {
      Inspector.Summary s = inspector.summary(kind);
      if (s.stuck() > 0) {
        out.accept(Finding.warn("postgres.stuck." + kind.slug(), s.stuck() + " " + kind.description() + " older than "
            + RocketMQRules.human(s.threshold()) + " (oldest " + RocketMQRules.human(s.oldest()) + ")", fix(kind)));
      } else {
        clear.add(kind.slug());
      }
    }
    if (clear.size() == StuckKind.values().length) {
      out.accept(Finding.pass("postgres.stuck", "nothing stuck past its threshold (" + clear.size() + " kinds)"));
    }
  }

  private static String fix(StuckKind kind) {
    return switch (kind) {
      case ROCKETMQ_UNIT -> "waiting for a check-back: check that a producer of the group runs; tickets: converge txn"
          + " tickets, then deliver or discard each and converge txn resolve MESSAGE_ID";
      case PULSAR_TXN -> "check pulsar.coordinators and that a producer of the group runs (its recovery re-publishes "
          + "them after their transaction timeout)";
      case PULSAR_RECOVERY -> "converge pulsar parked, fix the reason, then converge pulsar resume ID";
      case OUTBOX_LAG -> "check that a relay runs on this schema and reaches the broker";
      case OUTBOX_PARKED -> "converge outbox parked, fix the reason, then converge outbox resume KEY";
      case CONSUMER_DLQ -> "converge dlq list, fix the consumer, then redeliver or converge dlq discard ID";
      case TICKET -> "converge dlq tickets, then converge dlq resolve ID once handled";
      case IDEMPOTENCY_KEY -> "in progress: check the service that holds them; expired: check the key purge runs";
      case STATE -> "look at the entities' latest transitions (the console) and the service driving them";
      case SAGA -> "converge saga list, then converge saga show ID: running, check that a coordinator polls this schema"
          + " and its participants reply (converge saga retry ID asks again); a ticket: handle it, then converge saga"
          + " resolve ID";
      case TCC_HANGING ->
        "converge trace GLOBAL_ID: a Try arrived after its Cancel (nothing was frozen); check that the"
            + " participant is not overloaded and that the global timeout covers its Try's latency";
    };
  }
}
