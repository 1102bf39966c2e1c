package io.converge.examples.account;

import org.springframework.data.jpa.repository.JpaRepository;

/** Debits by order id. */
public interface AccountEntryRepository extends JpaRepository<AccountEntry, String> {
}
