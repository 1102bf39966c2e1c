package io.converge.examples.account;

import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/** Accounts; the balance changes only through the compare-and-swap {@link #debit}. */
public interface AccountRepository extends JpaRepository<Account, String> {

  /** The balance and version as they are in the database now (not a managed entity). */
  record Balance(long balanceCents, long version) {
  }

  @Query("select new io.converge.examples.account.AccountRepository$Balance(a.balanceCents, a.version)"
      + " from Account a where a.customerId = :c")
  Optional<Balance> balance(@Param("c") String customerId);

  /**
   * Debits when the account is still at {@code version} and holds enough; 1 row or 0. Native SQL, as the stock moves
   * of {@code StockRepository} are: Hibernate would translate a JPQL {@code update} again on every execution.
   */
  @Modifying
  @Query(nativeQuery = true, value = """
      UPDATE account SET balance_cents = balance_cents - :amount, version = version + 1
      WHERE customer_id = :c AND version = :version AND balance_cents >= :amount""")
  int debit(@Param("c") String customerId, @Param("version") long version, @Param("amount") long amountCents);
}
