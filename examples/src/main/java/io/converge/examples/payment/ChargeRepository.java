package io.converge.examples.payment;

import java.util.Optional;
import org.springframework.data.jpa.repository.JpaRepository;

/** Charges by id and by the merchant's business key. */
public interface ChargeRepository extends JpaRepository<Charge, String> {

  Optional<Charge> findByMerchantIdAndOutTradeNo(String merchantId, String outTradeNo);
}
