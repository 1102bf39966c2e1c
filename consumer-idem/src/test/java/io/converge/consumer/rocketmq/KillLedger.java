package io.converge.consumer.rocketmq;

import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.consumer.Outcome;
import io.converge.consumer.spi.ForwardingIdempotentHandler;
import java.util.function.BiFunction;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The business side of {@link ConsumerKillIT}, shared by the test and its child ({@link KilledConsumerMain}): a
 * {@code kill_ledger} table with one row per handled message, and the idempotent handler that writes it.
 */
final class KillLedger {

  private KillLedger() {
  }

  /** Creates the ledger in {@code db}'s schema and returns the schema's name (for the child's connection). */
  static String create(DataSource db) {
    JdbcTemplate jdbc = new JdbcTemplate(db);
    jdbc.execute("CREATE TABLE kill_ledger (id bigserial PRIMARY KEY, message_id text NOT NULL)");
    return jdbc.queryForObject("SELECT current_schema()", String.class);
  }

  /**
   * The handler of {@code group}: one ledger row per message, in the dedup transaction; every call goes through
   * {@code around} (the real handler and the message), which returns the outcome the binding sees.
   */
  static IdempotentHandler handler(String group, DataSource db,
      BiFunction<IdempotentHandler, IncomingMessage, Outcome> around) {
    IdempotentHandler real = IdempotentHandler.builder().group(group).dataSource(db).handler((c, m) -> {
      try (var ps = c.prepareStatement("INSERT INTO kill_ledger (message_id) VALUES (?)")) {
        ps.setString(1, m.envelopeMessageId());
        ps.executeUpdate();
      }
    }).build();
    return ForwardingIdempotentHandler.around(real, message -> around.apply(real, message));
  }

  /** The ledger rows of message {@code id}: its effects. */
  static int effects(DataSource db, String id) {
    return new JdbcTemplate(db).queryForObject("SELECT count(*) FROM kill_ledger WHERE message_id = ?",
        Integer.class, id);
  }
}
