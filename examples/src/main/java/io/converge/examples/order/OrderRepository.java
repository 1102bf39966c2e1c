package io.converge.examples.order;

import org.springframework.data.jpa.repository.JpaRepository;

/** Orders by id. */
public interface OrderRepository extends JpaRepository<PurchaseOrder, String> {
}
