package io.converge.examples.payment;

import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;

/** Refunds by id and by the merchant's refund number. */
public interface RefundRepository extends JpaRepository<Refund, String> {

  Optional<Refund> findByChargeIdAndOutRefundNo(String chargeId, String outRefundNo);
}
