package io.converge.examples.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Id;
import jakarta.persistence.MappedSuperclass;
import jakarta.persistence.PostLoad;
import jakarta.persistence.PostPersist;
import jakarta.persistence.Transient;
import java.time.Instant;
import org.springframework.data.domain.Persistable;

/**
 * A row a saga step writes once per order: the primary key is the order id ({@code order_id}), so a second write for
 * the same order is refused by the database even if a duplicate event got past the consumer's dedup. It names the
 * customer ({@code customer_id}) and when it was written ({@code created_at}; a subclass may rename the column with
 * {@code @AttributeOverride(name = "writtenAt", ...)}). It is {@link Persistable}: a row built with the constructor is
 * new until persisted, so Spring Data's {@code save} persists it (one {@code INSERT}, refused on a duplicate key)
 * instead of merging it (a {@code SELECT}, then an {@code UPDATE} that would overwrite the first write). Not
 * thread-safe (an entity belongs to one persistence context).
 */
@MappedSuperclass
public abstract class OrderKeyedRow implements Persistable<String> {

  @Id
  @Column(name = "order_id")
  private String orderId;
  @Column(name = "customer_id", nullable = false)
  private String customerId;
  @Column(name = "created_at", nullable = false)
  private Instant writtenAt;
  @Transient
  private boolean stored;

  /** For JPA. */
  protected OrderKeyedRow() {
  }

  /** A row of order {@code orderId} of customer {@code customerId}, written at {@code writtenAt}. */
  protected OrderKeyedRow(String orderId, String customerId, Instant writtenAt) {
    this.orderId = orderId;
    this.customerId = customerId;
    this.writtenAt = writtenAt;
  }

  /** The order this row belongs to (its primary key). */
  public String getOrderId() {
    return orderId;
  }

  /** The order id, as {@link Persistable} names the primary key. */
  @Override
  public String getId() {
    return orderId;
  }

  /** True for a row built with the constructor, until it is persisted; false for a row loaded from the database. */
  @Override
  public boolean isNew() {
    return !stored;
  }

  @PostLoad
  @PostPersist
  void stored() {
    stored = true;
  }
}
