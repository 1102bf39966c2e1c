package io.converge.examples.demo;

import io.converge.examples.events.EventCodec;
import io.converge.examples.events.Events.SagaOrder;
import io.converge.examples.events.Topics;
import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import io.converge.saga.tcc.TccHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The orchestrated flow's TCC debit meeting a Try delayed past its Cancel (issue 33, item 4), as the account service
 * sees it: for a few orders canceled for stock (their saga ended before its debit), the debit's Cancel, then its
 * Try, each sent through the broker's raw client with the saga and TCC headers the coordinator would give them and a
 * new message id (a copy the consumers' dedup does not absorb: the branch barrier must). The Cancel must be an empty
 * rollback and the Try, arriving after it, refused as hanging: had the Try run, the order's amount would stay frozen
 * with no order to confirm or cancel it, which the reconciliation reports ("frozen balances at the end = 0").
 */
final class LateTries {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private LateTries() {
  }

  private record Late(SagaOrder order, String tenant) {
  }

  /**
   * Sends the Cancel then the Try of the debit of at most {@code max} orders canceled for stock, each Try after its
   * Cancel was recorded, and waits (at most a minute each) for the barrier to refuse each Try; returns how many Tries
   * it sent. The reconciliation compares that with the barrier's empty rollbacks and hanging refusals.
   */
  static int send(Services s, DuplicateInjector raw, int max) throws Exception {
    List<Late> late = new ArrayList<>();
    try (Connection c = s.db("order").getConnection();
        PreparedStatement ps = c.prepareStatement("""
            SELECT o.id, o.customer_id, o.sku, o.quantity, o.amount_cents, g.tenant
              FROM orders o JOIN converge_saga g ON g.id = o.id
             WHERE g.state = 'COMPENSATED' AND o.cancel_reason LIKE 'stock:%'
               AND NOT EXISTS (SELECT 1 FROM converge_saga_event e WHERE e.saga_id = o.id AND e.step = 'debit')
             ORDER BY o.created_at LIMIT ?""")) {
      ps.setInt(1, max);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          late.add(new Late(new SagaOrder(rs.getString(1), rs.getString(2), rs.getString(3), rs.getInt(4),
              rs.getLong(5)), rs.getString(6)));
        }
      }
    }
    EventCodec codec = new EventCodec();
    int sent = 0;
    for (Late l : late) {
      raw.send(command(s, codec, l, Topics.ACCOUNT_COMPENSATIONS, SagaHeaders.COMPENSATE, "cancel"));
      if (!await(s, l, "cancel", "SELECT 1")) {
        continue; // the Cancel never arrived: sending the Try now would not test what comes after it
      }
      raw.send(command(s, codec, l, Topics.ACCOUNT_COMMANDS, SagaHeaders.FORWARD, "try"));
      sent++;
      await(s, l, "try", "SELECT refusals > 0"); // not refused within the wait: the reconciliation reports it
    }
    return sent;
  }

  private static OutgoingMessage command(Services s, EventCodec codec, Late l, String topic, String direction,
      String operation) {
    String id = l.order().orderId();
    return OutgoingMessage.builder(s.topics().of(topic)).id(UUID.randomUUID().toString()).key(id).tenant(l.tenant())
        .payload(codec.bytes(l.order()))
        .header(SagaHeaders.SAGA_ID, id).header(SagaHeaders.STEP, "debit").header(SagaHeaders.ATTEMPT, "1")
        .header(SagaHeaders.DIRECTION, direction).header(SagaHeaders.COMMAND_ID, "late-" + operation + "-" + id)
        .header(SagaHeaders.REPLY_TO, s.topics().of(Topics.ORDER_SAGA_REPLIES))
        .header(TccHeaders.GLOBAL_ID, id).header(TccHeaders.BRANCH_ID, "debit").header(TccHeaders.OPERATION, operation)
        .build();
  }

  /** Waits (at most {@link #WAIT}) until the barrier's row of {@code operation} satisfies {@code select}. */
  private static boolean await(Services s, Late l, String operation, String select) throws SQLException,
      InterruptedException {
    long until = System.nanoTime() + WAIT.toNanos();
    do {
      try (Connection c = s.db("account").getConnection();
          PreparedStatement ps = c.prepareStatement(select + " FROM converge_tcc_barrier"
              + " WHERE tenant = ? AND global_id = ? AND branch_id = 'debit' AND operation = ?")) {
        ps.setString(1, l.tenant());
        ps.setString(2, l.order().orderId());
        ps.setString(3, operation);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getBoolean(1)) {
            return true;
          }
        }
      }
      Thread.sleep(100);
    } while (System.nanoTime() < until);
    return false;
  }
}
