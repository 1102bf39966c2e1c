package io.converge.ops.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.CliRun;
import org.junit.jupiter.api.Test;

/**
 * {@code converge doctor} whose check breaks with an unexpected error: a failure (exit 2), the error printed; the
 * database options of the other commands, all optional, but {@code --jdbc-url} and {@code --user} go together.
 */
class DoctorCommandTest {

  @Test
  void aCheckThatBreaksIsAFailureWithItsErrorPrinted() {
    // a JDBC URL the PostgreSQL driver refuses to parse: the check throws before it can report a finding
    CliRun run = CliRun.of("doctor", "--jdbc-url", "jdbc:notpostgres://db:5432/app", "--user", "ops");
    assertThat(run.status()).as(run.err()).isEqualTo(2);
    assertThat(run.err()).contains("doctor: FAIL").contains("jdbc:notpostgres://db:5432/app");
    assertThat(run.out()).contains("1 FAIL");
  }

  @Test
  void theDatabaseOptionsAreCheckedTogether() {
    CliRun.of("doctor", "--jdbc-url", "jdbc:postgresql://db:5432/app").assertFails(2, "--user");
    // not ignored: a database option without --jdbc-url is a usage error, not "nothing to check"
    CliRun.of("doctor", "--namesrv", "ns:9876", "--user", "ops")
        .assertFails(2, "Missing required argument(s): --jdbc-url");
    CliRun.of("doctor", "--jdbc-url", "jdbc:postgresql://db:5432/app", "--user", "ops", "--schema", "a;b")
        .assertFails(2, "--schema must be a plain identifier, but was a;b");
  }
}
