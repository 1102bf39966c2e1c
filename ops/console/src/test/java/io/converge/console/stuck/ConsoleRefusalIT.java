package io.converge.console.stuck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.Ports;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.StuckKind;
import io.converge.console.trace.Timeline;
import io.converge.core.DatabaseRefusedException;
import io.converge.core.DatabaseUnavailableException;
import java.net.URI;
import java.time.Duration;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The console's reads and the stuck webhook's rows tell a database that refuses (a role the server does not know,
 * SQLState class 28; the webhook's table missing, 42P01) from one that cannot be reached: only the second is an
 * outage ({@code DatabaseErrors}, the one classifier). Before, each site reported every SQL error as an outage.
 */
class ConsoleRefusalIT {

  private static final URI HOOK = URI.create("http://127.0.0.1:1/hook");

  /** One console call on a data source. */
  interface Call {

    void run(DataSource db);
  }

  private static DataSource unknownRole;
  private static DataSource noTables;
  private static DataSource nowhere;

  @BeforeAll
  static void databases() {
    ConvergePostgres pg = ConvergePostgres.shared();
    PGSimpleDataSource role = new PGSimpleDataSource();
    role.setUrl(pg.jdbcUrl());
    role.setUser("converge_no_such_role");
    role.setPassword("wrong");
    unknownRole = role;
    noTables = pg.newSchema("consolerefusal");
    PGSimpleDataSource unreachable = new PGSimpleDataSource();
    unreachable.setUrl("jdbc:postgresql://127.0.0.1:" + Ports.free() + "/postgres?connectTimeout=2");
    nowhere = unreachable;
  }

  static Stream<Arguments> calls() {
    return Stream.of(
        call("Timeline.trace", "28", true, db -> Timeline.of(db).trace("ch-1")),
        call("Inspector.list", "28", true, db -> Inspector.of(db).list(StuckKind.values()[0], Inspector.Filter.all())),
        call("Inspector.summary", "28", true, db -> Inspector.of(db).summary(StuckKind.values()[0])),
        call("NotifiedRows.leaseOne", "42P01", false, db -> new NotifiedRows(db, HOOK).leaseOne(Duration.ofSeconds(1),
            3)),
        call("NotifiedRows.delivered", "42P01", false, db -> new NotifiedRows(db, HOOK)
            .delivered(new NotifiedRows.Leased("outbox", "1", "{}", 0))));
  }

  private static Arguments call(String name, String state, boolean asUnknownRole, Call call) {
    return Arguments.of(name, state, asUnknownRole, call);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("calls")
  void aRefusalIsNotAnOutage(String name, String state, boolean asUnknownRole, Call call) {
    assertThatThrownBy(() -> call.run(asUnknownRole ? unknownRole : noTables)).as(name)
        .isInstanceOf(DatabaseRefusedException.class)
        .satisfies(e -> assertThat(((DatabaseRefusedException) e).sqlState()).startsWith(state));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("calls")
  void anUnreachableDatabaseIsStillAnOutage(String name, String state, boolean asUnknownRole, Call call) {
    assertThatThrownBy(() -> call.run(nowhere)).as(name).isInstanceOf(DatabaseUnavailableException.class);
  }
}
