package io.converge.examples.inventory;

import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/**
 * Stock moves as single conditional updates (article 5: no oversell): each returns the rows changed,
 * 0 when the condition does not hold. They are native SQL: Hibernate caches the SQL of a JPQL select, but translates a
 * JPQL {@code update} to SQL again on every execution, which costs more CPU than the update itself on this hot path.
 */
public interface StockRepository extends JpaRepository<Stock, String> {

  @Modifying
  @Query(nativeQuery = true, value = """
      UPDATE stock SET available = available - :q, reserved = reserved + :q, version = version + 1
      WHERE sku = :sku AND available >= :q""")
  int reserve(@Param("sku") String sku, @Param("q") long quantity);

  @Modifying
  @Query(nativeQuery = true, value = """
      UPDATE stock SET available = available + :q, reserved = reserved - :q, version = version + 1
      WHERE sku = :sku AND reserved >= :q""")
  int release(@Param("sku") String sku, @Param("q") long quantity);

  @Modifying
  @Query(nativeQuery = true, value = """
      UPDATE stock SET reserved = reserved - :q, sold = sold + :q, version = version + 1
      WHERE sku = :sku AND reserved >= :q""")
  int sell(@Param("sku") String sku, @Param("q") long quantity);
}
