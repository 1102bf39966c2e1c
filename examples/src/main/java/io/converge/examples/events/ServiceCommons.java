package io.converge.examples.events;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** What every service of the saga shares: topic names, the event codec, a meter registry, the traces' export. */
@Configuration(proxyBeanMethods = false)
@Import(ServiceTracing.class)
public class ServiceCommons {

  @Bean
  Topics topics(@Value("${examples.topic-suffix:}") String suffix) {
    return new Topics(suffix);
  }

  @Bean
  EventCodec eventCodec() {
    return new EventCodec();
  }

  /**
   * The services' clock: the system's, shifted by {@code examples.clock-skew} (an ISO-8601 duration such as
   * {@code PT5M} or {@code -PT3M}; a system property or any Spring property source; default none), so that a
   * chaos run can skew one service's clock against the others'.
   */
  @Bean
  Clock clock(@Value("${examples.clock-skew:PT0S}") Duration skew) {
    return skew.isZero() ? Clock.systemUTC() : Clock.offset(Clock.systemUTC(), skew);
  }

  /** A registry for Converge's meters when the application brings none (no actuator here). */
  @Bean
  MeterRegistry meterRegistry() {
    return new SimpleMeterRegistry();
  }
}
