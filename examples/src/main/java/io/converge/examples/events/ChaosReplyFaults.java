package io.converge.examples.events;

import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnContext;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.JoinableProducer;
import io.converge.producer.spi.JoinedTransaction;
import io.converge.saga.SagaHeaders;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A chaos-only hook ({@code converge chaos}, never on by default): with {@value #PROPERTY}{@code =true}, the service's
 * {@link TxnProducer} is wrapped so that a saga participant's forward reply can be lost or held back, as a network or a
 * slow participant would. The faults are armed at run time in the participant's own database, one row per shot, in
 * {@value #ARMED} (created by the chaos run); each shot is taken, in the reply's own transaction, by the next forward
 * reply of its step ({@code FOR UPDATE SKIP LOCKED}: a held-back reply never blocks another), and recorded with its
 * saga in {@value #HITS}, so that the recording commits if and only if the participant's work and stored reply do.
 *
 * <ul>
 *   <li>{@code drop}: the reply is not published at all (the coordinator never receives it) while the work and the
 *       stored reply commit; the coordinator must time the step out and send the command again with the same command
 *       id, which the participant answers from its stored reply.</li>
 *   <li>{@code delay}: the participant's transaction holds the reply back for the shot's milliseconds (past the step's
 *       timeout) before publishing it; the coordinator re-sends meanwhile, and must apply one reply only.</li>
 * </ul>
 *
 * Only messages with a {@link SagaHeaders#OUTCOME} header and the forward direction are candidates for these two:
 * events and compensation replies pass through untouched. A TCC branch's commands, in the coordinator's service,
 * meet the shots of {@link ChaosTccFaults} instead: a Try held back past the saga's global timeout, a Confirm and a
 * Cancel copied to be delivered twice. Register with {@code @Import(ChaosReplyFaults.class)}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = ChaosReplyFaults.PROPERTY, havingValue = "true")
public class ChaosReplyFaults {

  /** The property that enables the hook (default off). */
  public static final String PROPERTY = "examples.chaos.reply-faults";
  /**
   * The armed shots: {@code id, kind, step, delay_ms, taken}; a participant's reply shots are {@code drop|delay} of a
   * saga step, a coordinator's TCC command shots {@code hold} of {@code try} and {@code copy} of {@code confirm} or
   * {@code cancel} ({@link ChaosTccFaults}).
   */
  public static final String ARMED = "examples_chaos_reply_fault";
  /** The shots taken: {@code saga_id, step, kind, command_id, at}. */
  public static final String HITS = "examples_chaos_reply_hit";

  /** The two tables, for the chaos run to create in a participant's database before it arms a shot. */
  public static final String DDL = """
      CREATE TABLE IF NOT EXISTS examples_chaos_reply_fault (id bigserial PRIMARY KEY, kind text NOT NULL,
        step text NOT NULL, delay_ms bigint NOT NULL DEFAULT 0, taken boolean NOT NULL DEFAULT false);
      CREATE TABLE IF NOT EXISTS examples_chaos_reply_hit (saga_id text NOT NULL, step text NOT NULL,
        kind text NOT NULL, command_id text, at timestamptz NOT NULL DEFAULT now());
      """ + ChaosTccFaults.DDL;
  /** The TCC commands a coordinator's hook held back or copied ({@link ChaosTccFaults}). */
  public static final String KEPT = ChaosTccFaults.KEPT;

  private static final Logger log = LoggerFactory.getLogger(ChaosReplyFaults.class);

  private static final String TAKE = """
      UPDATE examples_chaos_reply_fault SET taken = true
       WHERE id = (SELECT id FROM examples_chaos_reply_fault WHERE step = ? AND kind IN ('drop', 'delay') AND NOT taken ORDER BY id LIMIT 1
                   FOR UPDATE SKIP LOCKED)
      RETURNING kind, delay_ms""";
  private static final String HIT = "INSERT INTO examples_chaos_reply_hit (saga_id, step, kind, command_id)"
      + " VALUES (?, ?, ?, ?)";

  /** Wraps every {@link TxnProducer} bean of the service. */
  @Bean
  static BeanPostProcessor chaosReplyFaultsPostProcessor() {
    return new BeanPostProcessor() {

      @Override
      public Object postProcessAfterInitialization(Object bean, String name) {
        return bean instanceof TxnProducer p && !(bean instanceof Faulty) ? new Faulty(p) : bean;
      }
    };
  }

  /**
   * A producer whose units of work may lose or hold back a forward saga reply. It joins Spring's transactions as the
   * producer it wraps does ({@link JoinableProducer}, which {@code TransactionalPublisher} requires): those publish
   * events, never a participant's reply, and pass through untouched.
   */
  static final class Faulty implements TxnProducer, JoinableProducer {

    private final TxnProducer delegate;

    Faulty(TxnProducer delegate) {
      this.delegate = delegate;
    }

    @Override
    public JoinedTransaction join(Connection connection) {
      if (!(delegate instanceof JoinableProducer joinable)) {
        throw new IllegalStateException("chaos: the producer " + delegate.getClass().getName()
            + " cannot join a transaction, so neither can its reply-fault wrapper");
      }
      return joinable.join(connection);
    }

    @Override
    public <T> T inTransaction(io.converge.producer.UnitOfWork<T> work) {
      return delegate.inTransaction(tx -> work.run(new TxnContext() {

        @Override
        public Connection connection() {
          return tx.connection();
        }

        @Override
        public String publish(OutgoingMessage message) {
          return ChaosReplyFaults.publish(tx, message);
        }
      }));
    }

    @Override
    public String group() {
      return delegate.group();
    }

    @Override
    public String backend() {
      return delegate.backend();
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  private static String publish(TxnContext tx, OutgoingMessage m) {
    if (ChaosTccFaults.isCommand(m)) {
      try {
        return armed(tx.connection()) ? ChaosTccFaults.publish(tx, m) : tx.publish(m);
      } catch (SQLException e) {
        throw new IllegalStateException("chaos: the TCC command faults of saga "
            + m.headers().get(SagaHeaders.SAGA_ID) + " cannot be read", e);
      }
    }
    String step = m.headers().get(SagaHeaders.STEP);
    if (m.headers().get(SagaHeaders.OUTCOME) == null || step == null
        || !SagaHeaders.FORWARD.equals(m.headers().get(SagaHeaders.DIRECTION))) {
      return tx.publish(m);
    }
    try {
      Connection c = tx.connection();
      if (!armed(c)) {
        return tx.publish(m);
      }
      String kind;
      long delay;
      try (PreparedStatement ps = c.prepareStatement(TAKE)) {
        ps.setString(1, step);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return tx.publish(m);
          }
          kind = rs.getString(1);
          delay = rs.getLong(2);
        }
      }
      String saga = m.headers().get(SagaHeaders.SAGA_ID);
      try (PreparedStatement ps = c.prepareStatement(HIT)) {
        ps.setString(1, saga);
        ps.setString(2, step);
        ps.setString(3, kind);
        ps.setString(4, m.headers().get(SagaHeaders.COMMAND_ID));
        ps.executeUpdate();
      }
      if ("drop".equals(kind)) {
        log.warn("chaos: the reply of saga {} step '{}' is dropped (never published)", saga, step);
        return m.id() != null ? m.id() : UUID.randomUUID().toString();
      }
      log.warn("chaos: the reply of saga {} step '{}' is held back {} ms", saga, step, delay);
      Thread.sleep(delay); // the injected delay itself, not a synchronisation
      return tx.publish(m);
    } catch (SQLException e) {
      throw new IllegalStateException("chaos: the reply faults of step '" + step + "' cannot be read", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("chaos: interrupted while holding back a reply of step '" + step + "'", e);
    }
  }

  /** Whether the chaos run created the table of shots in this database (it does before it arms one). */
  private static boolean armed(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT to_regclass('" + ARMED + "') IS NOT NULL")) {
      return rs.next() && rs.getBoolean(1);
    }
  }
}
