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

  /** Debits when the account is still at {@code version} and holds enough; 1 row or 0. */
  @Modifying
  @Query("""
      update Account a set a.balanceCents = a.balanceCents - :amount, a.version = a.version + 1
      where a.customerId = :c and a.version = :version and a.balanceCents >= :amount""")
  int debit(@Param("c") String customerId, @Param("version") long version, @Param("amount") long amountCents);
}
