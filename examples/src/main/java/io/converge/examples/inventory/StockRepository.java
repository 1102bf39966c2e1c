package io.converge.examples.inventory;

import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Modifying;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/**
 * Stock moves as single conditional updates (article 5: no oversell): each returns the rows changed,
 * 0 when the condition does not hold.
 */
public interface StockRepository extends JpaRepository<Stock, String> {

  @Modifying
  @Query("""
      update Stock s set s.available = s.available - :q, s.reserved = s.reserved + :q, s.version = s.version + 1
      where s.sku = :sku and s.available >= :q""")
  int reserve(@Param("sku") String sku, @Param("q") long quantity);

  @Modifying
  @Query("""
      update Stock s set s.available = s.available + :q, s.reserved = s.reserved - :q, s.version = s.version + 1
      where s.sku = :sku and s.reserved >= :q""")
  int release(@Param("sku") String sku, @Param("q") long quantity);

  @Modifying
  @Query("""
      update Stock s set s.reserved = s.reserved - :q, s.sold = s.sold + :q, s.version = s.version + 1
      where s.sku = :sku and s.reserved >= :q""")
  int sell(@Param("sku") String sku, @Param("q") long quantity);
}
