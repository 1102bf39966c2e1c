package io.converge.consumer.order;

import io.converge.consumer.IllegalTransitionException;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.MessageHandler;
import io.converge.consumer.StaleStateException;
import io.converge.consumer.StateMachine;
import io.converge.core.ConvergeException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * Both ends of the order tests, on one schema: the publishing service commits each step of a payment as a
 * business row plus its message in one unit of work; the consuming service applies each message through a
 * {@link StateMachine} that allows only {@code CREATED -> PAID -> REFUNDING -> REFUNDED}, one effect row per
 * applied message, and records every transition it had to refuse: illegal (a step skipped, or a step before
 * its payment exists) or stale (a step at or behind the payment's state, or a lost compare-and-swap: two
 * messages of one key at once). Thread-safe.
 */
final class Payments {

  /** The life of a payment, in publish order. */
  enum State {
    CREATED, PAID, REFUNDING, REFUNDED
  }

  private static final StateMachine<State> MACHINE = StateMachine.builder("order_payment", State.class)
      .allow(State.CREATED, State.PAID)
      .allow(State.PAID, State.REFUNDING)
      .allow(State.REFUNDING, State.REFUNDED)
      .build();

  private final DataSource ds;
  private final Queue<String> refused = new ConcurrentLinkedQueue<>();

  Payments(DataSource ds) throws SQLException {
    this.ds = ds;
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS order_ledger "
          + "(id BIGSERIAL PRIMARY KEY, payment_id TEXT NOT NULL, state TEXT NOT NULL, message_id TEXT)");
      s.execute("CREATE TABLE IF NOT EXISTS order_payment "
          + "(id TEXT PRIMARY KEY, state TEXT NOT NULL, version BIGINT NOT NULL DEFAULT 0)");
      s.execute("CREATE TABLE IF NOT EXISTS order_effect "
          + "(id BIGSERIAL PRIMARY KEY, message_id TEXT NOT NULL, payment_id TEXT NOT NULL, state TEXT NOT NULL)");
    }
  }

  /**
   * The publishing side: one unit of work writes the ledger row of {@code key}'s step {@code to} and publishes
   * its message ({@code "<key> <STATE>"}, keyed by the payment) atomically with it.
   *
   * @return the message id
   */
  static String publish(TxnProducer producer, String topic, String key, State to) {
    return producer.inTransaction(tx -> {
      String id = tx.publish(OutgoingMessage.builder(topic).key(key)
          .payload((key + " " + to).getBytes(StandardCharsets.UTF_8)).build());
      try (PreparedStatement ps = tx.connection()
          .prepareStatement("INSERT INTO order_ledger (payment_id, state, message_id) VALUES (?, ?, ?)")) {
        ps.setString(1, key);
        ps.setString(2, to.name());
        ps.setString(3, id);
        ps.executeUpdate();
      }
      return id;
    });
  }

  /** The key of a message published by {@link #publish}. */
  static String key(IncomingMessage m) {
    return m.payloadAsString().split(" ", 2)[0];
  }

  /** The step of a message published by {@link #publish}. */
  static State step(IncomingMessage m) {
    return State.valueOf(m.payloadAsString().split(" ", 2)[1]);
  }

  /** The consuming side's business handler; a message {@code poisoned} accepts fails as a technical failure. */
  MessageHandler handler(Predicate<IncomingMessage> poisoned) {
    return (c, m) -> {
      if (poisoned.test(m)) {
        throw new IllegalStateException("test: the handler of " + m.payloadAsString() + " fails");
      }
      apply(c, key(m), step(m), m.envelopeMessageId());
    };
  }

  private void apply(Connection c, String key, State to, String messageId) throws SQLException {
    try {
      if (to == State.CREATED) {
        create(c, key);
      } else {
        MACHINE.transition(c, key, to);
      }
    } catch (IllegalTransitionException | StaleStateException e) {
      Optional<State> now = MACHINE.read(c, key).map(StateMachine.Versioned::state);
      boolean stale = e instanceof StaleStateException || now.isPresent() && now.get().compareTo(to) >= 0;
      refused.add((stale ? "stale " : "illegal ") + key + " " + now.map(State::name).orElse("-") + " -> " + to
          + " (message " + messageId + ")");
      throw e;
    } catch (ConvergeException e) {
      refused.add("illegal " + key + " - -> " + to + " before its payment exists (message " + messageId + ")");
      throw e;
    }
    try (PreparedStatement ps = c
        .prepareStatement("INSERT INTO order_effect (message_id, payment_id, state) VALUES (?, ?, ?)")) {
      ps.setString(1, messageId);
      ps.setString(2, key);
      ps.setString(3, to.name());
      ps.executeUpdate();
    }
  }

  private static void create(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c
        .prepareStatement("INSERT INTO order_payment (id, state) VALUES (?, 'CREATED') ON CONFLICT DO NOTHING")) {
      ps.setString(1, key);
      if (ps.executeUpdate() == 0) {
        State now = MACHINE.read(c, key).orElseThrow().state();
        throw new IllegalTransitionException(MACHINE.entityType(), key, now.name(), State.CREATED.name());
      }
    }
  }

  /** Every transition the consumer refused, in the order it refused them. */
  List<String> refused() {
    return List.copyOf(refused);
  }

  DataSource dataSource() {
    return ds;
  }
}
