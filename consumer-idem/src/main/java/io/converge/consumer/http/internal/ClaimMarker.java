package io.converge.consumer.http.internal;

import io.converge.consumer.CommitOutcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The claim's work-committed marker, written by the handler's transactions on the key store's data source just before
 * their commit (see {@link CommitOutcome.Marker}): it commits if and only if the work does, so that a retry after a
 * lost answer learns that the work was done instead of running it again. Immutable and thread-safe.
 *
 * @param dataSource the key store's data source
 * @param tenant the claim's tenant
 * @param key the claim's Idempotency-Key
 * @param owner the claim's owner (this request)
 */
record ClaimMarker(DataSource dataSource, String tenant, String key, UUID owner) implements CommitOutcome.Marker {

  @Override
  public void mark(Connection transaction) throws SQLException {
    if (!KeyStore.markWorkCommitted(transaction, tenant, key, owner)) {
      // another request holds the key now and may run the handler: this work must not commit as well
      throw new SQLException("Idempotency-Key '" + key + "' of tenant '" + tenant + "' was taken over while its "
          + "handler ran; its work is not committed", "55000");
    }
  }
}
