package io.converge.examples.events;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** What every service of the saga shares: topic names, the event codec, a meter registry. */
@Configuration(proxyBeanMethods = false)
public class ServiceCommons {

  @Bean
  Topics topics(@Value("${examples.topic-suffix:}") String suffix) {
    return new Topics(suffix);
  }

  @Bean
  EventCodec eventCodec() {
    return new EventCodec();
  }

  /** A registry for Converge's meters when the application brings none (no actuator here). */
  @Bean
  MeterRegistry meterRegistry() {
    return new SimpleMeterRegistry();
  }
}
