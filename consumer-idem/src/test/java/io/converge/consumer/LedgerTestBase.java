package io.converge.consumer;

import io.converge.broker.postgres.PostgresExtension;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The fixture of the integration tests of the decorator without a broker: the test class's schema on the shared
 * PostgreSQL with the consumer migrations and the {@code ledger} table of {@link Db#insertLedger}.
 */
@ExtendWith(PostgresExtension.class)
abstract class LedgerTestBase {

  /** The test class's schema. */
  protected final DataSource ds;

  LedgerTestBase(DataSource ds) {
    this.ds = ds;
  }

  @BeforeAll
  static void schema(DataSource ds) {
    Db.consumerTablesAndLedger(ds);
  }
}
