package io.converge.examples.order;

import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;

/** Orders by id, and by the Idempotency-Key of the request that created them. */
public interface OrderRepository extends JpaRepository<PurchaseOrder, String> {

  /** The order created by the request with {@code idempotencyKey} of {@code tenant}. */
  Optional<PurchaseOrder> findFirstByTenantAndIdempotencyKeyOrderByCreatedAtAsc(String tenant, String idempotencyKey);
}
