package io.converge.examples.payment;

import io.converge.consumer.http.CallbackSecrets;
import io.converge.consumer.http.IdempotentEndpoint;
import io.converge.consumer.http.SignedCallbackFilter;
import io.converge.consumer.micrometer.MicrometerCallbackMetrics;
import io.converge.core.Migrations;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The payment provider's callbacks, {@code POST /charges/{id}/provider-callback} with a JSON body
 * {@code {"eventId", "chargeId", "outcome": "confirmed" | "failed"}}, signed {@code Converge-Signature:
 * t=<unix seconds>,v1=<HMAC-SHA256 hex>} with a secret of {@code examples.payment.callback-secrets}. Converge's
 * {@link SignedCallbackFilter} refuses a forged (401), stale or malformed (400) callback before the handler, and
 * answers a copy of a verified one with its first answer (the handler runs once); the handler records the callback
 * and sets the charge's {@code provider_status}.
 */
@Service
public class ProviderCallbacks {

  /** The demo's secret, the default of {@code examples.payment.callback-secrets}. */
  public static final String DEMO_SECRET = "whsec_converge_demo";
  /** The callback endpoint's path pattern. */
  static final String PATH = "/charges/{id}/provider-callback";

  private static final String RECORD = """
      INSERT INTO provider_callback (charge_id, event_id, outcome) VALUES (?, ?, ?)""";
  private static final String MARK = "UPDATE charge SET provider_status = ? WHERE id = ?";
  private static final String APPLIED = "SELECT count(*) FROM provider_callback WHERE charge_id = ?";

  private final JdbcTemplate jdbc;
  private final TransactionTemplate tx;
  private final Charges charges;

  ProviderCallbacks(JdbcTemplate jdbc, PlatformTransactionManager tm, Charges charges) {
    this.jdbc = jdbc;
    this.tx = new TransactionTemplate(tm);
    this.charges = charges;
  }

  /**
   * Applies a verified callback: records it and marks the charge CONFIRMED or FAILED by the provider.
   *
   * @throws PaymentException 400 when the body names another charge than the path (the signature covers the body,
   *     not the path) or an unknown outcome; 404 for an unknown charge
   */
  public Map<String, Object> apply(String chargeId, String bodyChargeId, String eventId, String outcome) {
    if (!chargeId.equals(bodyChargeId) || eventId == null || eventId.isBlank() || eventId.length() > 64
        || !("confirmed".equals(outcome) || "failed".equals(outcome))) {
      throw new PaymentException(400, "invalid-callback", "a callback for charge " + chargeId
          + " must name it and carry an eventId and an outcome of confirmed or failed, but named " + bodyChargeId
          + ", " + eventId + ", " + outcome, null);
    }
    charges.get(chargeId); // 404 for an unknown charge
    String status = outcome.toUpperCase(java.util.Locale.ROOT);
    Long applied = tx.execute(s -> {
      jdbc.update(RECORD, chargeId, eventId, outcome);
      jdbc.update(MARK, status, chargeId);
      return jdbc.queryForObject(APPLIED, Long.class, chargeId);
    });
    return Map.of("chargeId", chargeId, "eventId", eventId, "providerStatus", status, "callbacksApplied", applied);
  }

  /** The filter in front of the callback endpoint, on the service's database. */
  @Configuration(proxyBeanMethods = false)
  static class Filter {

    @Bean(destroyMethod = "destroy")
    SignedCallbackFilter providerCallbackFilter(DataSource dataSource, MeterRegistry meters,
        @Value("${examples.payment.callback-secrets:" + DEMO_SECRET + "}") List<String> secrets) {
      Migrations.apply(dataSource, "idempotency");
      return SignedCallbackFilter.builder().dataSource(dataSource).provider("demo-psp")
          .secrets(CallbackSecrets.of(secrets.toArray(String[]::new)))
          .endpoints(List.of(IdempotentEndpoint.of("POST", PATH))).metrics(MicrometerCallbackMetrics.of(meters))
          .build();
    }

    @Bean
    FilterRegistrationBean<SignedCallbackFilter> providerCallbackFilterRegistration(SignedCallbackFilter filter) {
      FilterRegistrationBean<SignedCallbackFilter> registration = new FilterRegistrationBean<>(filter);
      registration.setName("providerCallbackFilter");
      return registration;
    }
  }
}
