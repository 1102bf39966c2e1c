package io.converge.examples.inventory;

import io.converge.examples.jpa.VersionedEntity;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/**
 * A SKU's stock (table {@code stock}): {@code available + reserved + sold} is constant. It changes only
 * through the conditional updates of {@link StockRepository}, never read-modify-write.
 */
@Entity
@Table(name = "stock")
public class Stock extends VersionedEntity {

  @Id
  private String sku;
  @Column(nullable = false)
  private long available;
  @Column(nullable = false)
  private long reserved;
  @Column(nullable = false)
  private long sold;

  protected Stock() {
  }

  /** New stock of {@code available} units. */
  public Stock(String sku, long available) {
    this.sku = sku;
    this.available = available;
  }

  public String getSku() {
    return sku;
  }

  public long getAvailable() {
    return available;
  }

  public long getReserved() {
    return reserved;
  }

  public long getSold() {
    return sold;
  }
}
