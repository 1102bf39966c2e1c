package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.internal.BatchPurger.Cutoff;
import java.time.Duration;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The shared JDBC helpers classify a database error the one way ({@link DatabaseErrors#translate}): a statement the
 * database refuses (here a missing table, SQLState 42P01) is a {@link DatabaseRefusedException} carrying its
 * SQLState, not an outage to wait out; a connection that cannot be had is still a
 * {@link DatabaseUnavailableException}. Before, each of these sites wrapped every SQL error as an outage.
 */
class DatabaseErrorSitesIT {

  /** One call of a helper on a data source. */
  interface Site {

    void run(DataSource db) throws Exception;
  }

  private static DataSource empty;
  private static DataSource nowhere;

  @BeforeAll
  static void databases() {
    empty = ConvergePostgres.shared().newSchema("dberrsites");
    PGSimpleDataSource unreachable = new PGSimpleDataSource();
    unreachable.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    nowhere = unreachable;
  }

  static Stream<Arguments> sites() {
    Cutoff hourAgo = Cutoff.olderThan(Duration.ofHours(1));
    return Stream.of(
        site("BatchPurger.purge", db -> BatchPurger.of(db, "converge_missing", "created_at")
            .purge("the missing rows", hourAgo, 10, 1, n -> {
            })),
        site("BatchPurger.count", db -> BatchPurger.of(db, "converge_missing", "created_at")
            .count("the missing rows", hourAgo)),
        site("OpsRows.list", db -> OpsRows.on(db)
            .list("the missing rows", "SELECT id FROM converge_missing LIMIT ?", 10, 100, rs -> rs.getString(1))),
        site("OpsRows.count", db -> OpsRows.on(db).count("the missing rows", "SELECT count(*) FROM converge_missing")),
        site("OpsRows.updateOne", db -> OpsRows.on(db).updateOne("Could not mark m-1", "m-1",
            "UPDATE converge_missing SET note = 'x' WHERE id = ?", ps -> ps.setString(1, "m-1"))));
  }

  private static Arguments site(String name, Site site) {
    return Arguments.of(name, site);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sites")
  void aRefusedStatementIsARefusalWithItsSqlState(String name, Site site) {
    assertThatThrownBy(() -> site.run(empty)).as(name)
        .isInstanceOf(DatabaseRefusedException.class)
        .satisfies(e -> assertThat(((DatabaseRefusedException) e).sqlState()).isEqualTo("42P01"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sites")
  void aConnectionThatCannotBeHadIsStillAnOutage(String name, Site site) {
    assertThatThrownBy(() -> site.run(nowhere)).as(name).isInstanceOf(DatabaseUnavailableException.class);
  }
}
