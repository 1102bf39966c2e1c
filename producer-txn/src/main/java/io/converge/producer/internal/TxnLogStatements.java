package io.converge.producer.internal;

import io.converge.core.DatabaseRefusedException;
import io.converge.core.MessageIds;
import io.converge.core.internal.DayPartitions;
import io.converge.core.internal.NamedStatement;
import io.converge.core.internal.PipelinedCommit;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.LocalDate;
import java.util.Map;

/**
 * The statements of {@code converge_txn_log}, partitioned by the UTC day of the message id (producer-txn README,
 * "Partitions by day"). A row lives in the catch-all partition (day 1970-01-01) or in the partition of its id's day,
 * never elsewhere: every write routes its id with {@link #route}, and every read of an id looks in those two
 * partitions only. Stateless.
 */
final class TxnLogStatements {

  /** The reason of a write refused by {@link #route}, in the error's message. */
  private static final String REFUSED = "converge_txn_log: the partition of the day of the message is newer than"
      + " the snapshot of this transaction, retry the unit of work; partition ";

  /**
   * Where the row of message {@code id} goes ({@code id} and {@code day} are SQL expressions; the day is
   * {@link MessageIds#dayOf}, null for a foreign id), evaluated when the write runs, after its lock on
   * converge_txn_log: a partition is created and dropped under a lock that conflicts with it (DayPartitions).
   * <ul>
   *   <li>the catch-all while the day has no partition, or when the catch-all holds the id: logged there before its
   *   day's partition existed (before the migration, a future-dated id, or before the purge created it), so that the
   *   write conflicts with that row as it would have in one table. That row has committed: the partition's creation
   *   waited for it. The partition is looked up in converge_txn_log's own schema, never through the search path,
   *   and the catch-all is read through its parent: every search path routes an id alike.
   *   <li>else the day's partition, when this transaction's snapshot sees it (its {@code pg_class} row): a READ
   *   COMMITTED statement takes its snapshot after its lock, so it always does. A REPEATABLE READ or SERIALIZABLE
   *   transaction whose snapshot is older than the partition could miss a catch-all row of the id committed before
   *   the partition was created, and log the id twice: its write is refused ({@link #refused}; the refusal names the
   *   partition, a stable value, so that planning never folds it into an error on every route).
   * </ul>
   * The lookup is evaluated once per routed row: {@code OFFSET 0} keeps its subquery from being pulled up, which would
   * copy the lookup into each of its three uses.
   */
  static String route(String id, String day) {
    return """
        (SELECT CASE WHEN p IS NULL
                          OR EXISTS (SELECT 1 FROM converge_txn_log c
                                      WHERE c.day = DATE '1970-01-01' AND c.message_id = %2$s)
                     THEN DATE '1970-01-01'
                     WHEN EXISTS (SELECT 1 FROM pg_class v WHERE v.oid = p) THEN %3$s
                     ELSE CAST('%4$s' || p::text AS date) END
           FROM (SELECT %1$s AS p OFFSET 0) AS lookup)""".formatted(
        DayPartitions.partitionLookup("converge_txn_log", day), id, day, REFUSED);
  }

  private static final String ROUTE = "route AS (SELECT " + route(":id", "CAST(:day AS date)") + " AS day)";
  /** Where a row of {@code :id} may be: the catch-all or its day's partition (other partitions pruned). */
  private static final String ID = "message_id = :id AND day IN (DATE '1970-01-01', CAST(:day AS date))";

  private static String insert(String outcome) {
    return "WITH " + ROUTE + """

        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt, day)
        SELECT :id, :group, :topic, '%s', :attempt, r.day FROM route r
        ON CONFLICT DO NOTHING""".formatted(outcome);
  }

  /** A COMMITTED row, unless the id has one (in the partition it was routed to: its primary key). */
  static final NamedStatement RECORD = NamedStatement.parse(insert("COMMITTED"));

  /**
   * After {@link #RECORD} inserted nothing, in a statement of its own (READ COMMITTED: it sees a fence committed
   * while the insert waited for it): a fence of another attempt of the id (a dead attempt of a unit retried with the
   * same id) gives way to this attempt's commit; a fence of this attempt, of every attempt (null) or a committed row
   * does not.
   */
  static final NamedStatement REPLACE_FENCE = NamedStatement.parse("""
      UPDATE converge_txn_log SET outcome = 'COMMITTED', attempt = :attempt, topic = :topic, created_at = now()
       WHERE\s""" + ID + " AND outcome = 'ROLLED_BACK' AND attempt <> :attempt");

  /**
   * {@link #RECORD} then {@link #REPLACE_FENCE} as statements sent together (then a COMMIT, {@code PipelinedCommit}),
   * the second failing (division by zero) when neither wrote a row, so that the COMMIT never runs for a fenced
   * message. The first tells the second what it did through a setting local to the transaction.
   */
  static final NamedStatement RECORD_OR_FAIL = NamedStatement.parse("WITH " + ROUTE + """
      , inserted AS (
        INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, attempt, day)
        SELECT :id, :group, :topic, 'COMMITTED', :attempt, r.day FROM route r
        ON CONFLICT DO NOTHING
        RETURNING 1)
      SELECT set_config('converge.txn_log_inserted', count(*)::text, true) FROM inserted;
      WITH replaced AS (
        UPDATE converge_txn_log SET outcome = 'COMMITTED', attempt = :attempt, topic = :topic, created_at = now()
         WHERE current_setting('converge.txn_log_inserted') = '0' AND\s""" + ID + """
       AND outcome = 'ROLLED_BACK' AND attempt <> :attempt
        RETURNING 1)
      SELECT 1 / (current_setting('converge.txn_log_inserted')::int + (SELECT count(*) FROM replaced))::int
      """);

  /** {@link #RECORD_OR_FAIL} followed by the COMMIT ({@code PipelinedCommit}), built once. */
  static final String RECORD_OR_FAIL_AND_COMMIT = PipelinedCommit.withCommit(RECORD_OR_FAIL.sql());

  /** A check-back's ROLLED_BACK fence, unless the id has a row. */
  static final NamedStatement FENCE = NamedStatement.parse(insert("ROLLED_BACK"));

  static final NamedStatement OUTCOME = NamedStatement.parse("SELECT outcome, attempt FROM converge_txn_log WHERE "
      + ID);

  /** A second attempt of the id is fenced: the fence widens to every attempt, so the first stays fenced too. */
  static final NamedStatement WIDEN_FENCE = NamedStatement.parse("UPDATE converge_txn_log SET attempt = NULL WHERE "
      + ID + " AND outcome = 'ROLLED_BACK' AND attempt = :fenced");

  /**
   * COMMITTED rows of several ids, each routed; an id already logged fails it with a unique violation (of the primary
   * key of the partition that holds it, named {@code converge_txn_log...}). Parameters: the group, the ids
   * ({@code text[]}), their topics ({@code text[]}) and their days ({@code text[]} of ISO dates, null for a foreign
   * id: {@link #days}).
   */
  static final String RECORD_ALL = """
      INSERT INTO converge_txn_log (message_id, producer_group, topic, outcome, day)
      SELECT m.id, ?, m.topic, 'COMMITTED', %s
        FROM unnest(?::text[], ?::text[], ?::text[]) AS m(id, topic, day)
      """.formatted(route("m.id", "CAST(m.day AS date)"));

  private TxnLogStatements() {
  }

  /** The parameters of a row's group, topic and attempt (null: none). */
  static Map<String, String> row(String group, String topic, String attempt) {
    Map<String, String> values = new java.util.HashMap<>();
    values.put("group", group);
    values.put("topic", topic);
    values.put("attempt", attempt);
    return values;
  }

  /** The ISO day of each id ({@link MessageIds#dayOf}), null for a foreign id. */
  static String[] days(java.util.List<String> ids) {
    return ids.stream().map(TxnLogStatements::day).toArray(String[]::new);
  }

  private static String day(String id) {
    LocalDate day = MessageIds.dayOf(id);
    return day == null ? null : day.toString();
  }

  /** {@code statement} prepared on {@code c} with its parameters bound from {@code values} and the id's {@code :day}. */
  static PreparedStatement prepare(Connection c, String sql, NamedStatement statement, String id,
      Map<String, String> values) throws SQLException {
    Map<String, String> all = new java.util.HashMap<>(values);
    all.put("id", id);
    all.put("day", day(id));
    PreparedStatement ps = c.prepareStatement(sql);
    try {
      Object[] args = statement.arguments(all);
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, (String) args[i]);
      }
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /** {@link #prepare(Connection, String, NamedStatement, String, Map)} of the statement's own SQL. */
  static PreparedStatement prepare(Connection c, NamedStatement statement, String id, Map<String, String> values)
      throws SQLException {
    return prepare(c, statement.sql(), statement, id, values);
  }

  /**
   * A typed error when {@code e} is a write {@link #route} refused (a REPEATABLE READ or SERIALIZABLE transaction older
   * than the partition of its message's day), else null.
   */
  static DatabaseRefusedException refused(SQLException e, String id) {
    if (e.getMessage() == null || !e.getMessage().contains(REFUSED)) {
      return null;
    }
    return new DatabaseRefusedException("Message " + id + " was not logged: the partition of its day was created"
        + " after this REPEATABLE READ or SERIALIZABLE transaction's snapshot, which could miss a row of the id logged"
        + " before; the unit of work is rolled back, retry it", id, e.getSQLState(), e);
  }
}
