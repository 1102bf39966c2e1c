package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.ConvergeException;
import io.converge.core.DatabaseRefusedException;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.producer.spi.JoinableProducer;
import io.converge.producer.spi.JoinedTransaction;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * How a unit of work's outbox rows are written now that they are written when it commits (in the commit's round
 * trip): in publish order whatever their keys and however many, without the messages of a rolled-back savepoint,
 * and a row the database refuses fails the whole unit with nothing committed. On the embedded PostgreSQL.
 */
class OutboxUnitWriteIT {

  private final DataSource ds = RelayFixture.newOutbox();

  @Test
  void aUnitsRowsAreWrittenInPublishOrderWhateverTheirKeys() throws Exception {
    try (TxnProducer p = RelayFixture.producer(ds)) {
      List<String> published = p.inTransaction(tx -> {
        List<String> ids = new ArrayList<>();
        for (String key : new String[]{"K", "L", "K", null, "L"}) {
          ids.add(tx.publish(OutgoingMessage.builder("t").key(key).payload("x".getBytes(UTF_8)).build()));
        }
        return ids;
      });
      assertThat(idsInSeqOrder()).containsExactlyElementsOf(published);
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox WHERE order_key = message_id"))
          .as("a message without a key is ordered by its id").isEqualTo(1);
    }
  }

  @Test
  void aUnitOfMoreMessagesThanOnePipelineHoldsKeepsThemInPublishOrder() throws Exception {
    try (TxnProducer p = RelayFixture.producer(ds)) {
      List<String> published = p.inTransaction(tx -> {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
          ids.add(tx.publish(OutgoingMessage.builder("t").key("k-" + i % 3).payload(new byte[]{(byte) i}).build()));
        }
        return ids;
      });
      assertThat(idsInSeqOrder()).containsExactlyElementsOf(published);
    }
  }

  /**
   * A joined transaction (Spring's) writes its rows in {@code beforeCommit}; a message published after it (a
   * {@code BEFORE_COMMIT} listener running after the publisher's synchronization) would never be written: it is
   * refused, and the owner's commit fails instead of committing without it (found in review).
   */
  @Test
  void aMessagePublishedAfterTheJoinedUnitsRowsWereWrittenIsRefusedNotLost() throws Exception {
    try (TxnProducer p = RelayFixture.producer(ds); Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      JoinedTransaction joined = ((JoinableProducer) p).join(c);
      joined.publish(OutgoingMessage.builder("t").key("K").payload("1".getBytes(UTF_8)).build());
      joined.beforeCommit();
      assertThatThrownBy(() -> joined.publish(OutgoingMessage.builder("t").key("K").payload("2".getBytes(UTF_8))
          .build())).isInstanceOf(ConvergeException.class)
          .hasMessageContaining("was published after its transaction's messages were completed for the commit");
      c.rollback();
      joined.completed(false);
    }
    assertThat(idsInSeqOrder()).isEmpty();
  }

  @Test
  void theMessagesOfARolledBackSavepointAreNeverWritten() throws Exception {
    try (TxnProducer p = RelayFixture.producer(ds)) {
      List<String> kept = p.inTransaction(tx -> {
        String first = tx.publish(OutgoingMessage.builder("t").key("K").payload("1".getBytes(UTF_8)).build());
        Savepoint sp = tx.connection().setSavepoint();
        tx.publish(OutgoingMessage.builder("t").key("K").payload("2".getBytes(UTF_8)).build());
        tx.publish(OutgoingMessage.builder("t").key("M").payload("3".getBytes(UTF_8)).build());
        tx.connection().rollback(sp);
        String last = tx.publish(OutgoingMessage.builder("t").key("L").payload("4".getBytes(UTF_8)).build());
        return List.of(first, last);
      });
      assertThat(idsInSeqOrder()).containsExactlyElementsOf(kept);
    }
  }

  @Test
  void aRowTheDatabaseRefusesAtCommitRollsTheWholeUnitBack() throws Exception {
    RelayFixture.execute(ds, "CREATE TABLE business (id int)");
    RelayFixture.execute(ds, """
        CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.payload = convert_to('refused', 'UTF8') THEN
            RAISE EXCEPTION 'refused by the test' USING ERRCODE = '23514';
          END IF;
          RETURN NEW;
        END $$""");
    RelayFixture.execute(ds, "CREATE TRIGGER refuse_row BEFORE INSERT ON converge_outbox FOR EACH ROW"
        + " EXECUTE FUNCTION refuse_row()");
    try (TxnProducer p = RelayFixture.producer(ds)) {
      for (int messages = 1; messages <= 2; messages++) {
        int n = messages;
        assertThatThrownBy(() -> p.inTransaction(tx -> {
          try (Statement s = tx.connection().createStatement()) {
            s.execute("INSERT INTO business VALUES (1)");
          }
          if (n == 2) {
            tx.publish(OutgoingMessage.builder("t").key("K").payload("fine".getBytes(UTF_8)).build());
          }
          return tx.publish(OutgoingMessage.builder("t").key("K").payload("refused".getBytes(UTF_8)).build());
        })).isInstanceOfSatisfying(DatabaseRefusedException.class,
            e -> assertThat(e.sqlState()).isEqualTo("23514"));
      }
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM business")).isZero();
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox")).isZero();
      RelayFixture.publish(p, "t", "K");
      assertThat(RelayFixture.scalar(ds, "SELECT count(*) FROM converge_outbox")).isEqualTo(1);
    }
  }

  private List<String> idsInSeqOrder() throws Exception {
    List<String> ids = new ArrayList<>();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT message_id FROM converge_outbox ORDER BY seq")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    return ids;
  }
}
