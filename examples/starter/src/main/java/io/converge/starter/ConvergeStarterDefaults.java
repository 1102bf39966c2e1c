package io.converge.starter;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The starter's defaults, added as the environment's last property source (so any value the application
 * sets wins):
 * <ul>
 * <li>{@code converge.rocketmq.name-server}, when set, is the default of the three RocketMQ addresses
 * ({@code converge.producer.name-server}, {@code converge.outbox.name-server},
 * {@code converge.consumer.rocketmq.name-server}): one property for a service on one RocketMQ cluster;</li>
 * <li>{@code converge.idempotency.enabled=true}: the Idempotency-Key filter is on (it acts only on the
 * configured endpoints and {@code @Idempotent} handler methods); {@code false} turns it off.</li>
 * </ul>
 * Registered in {@code META-INF/spring.factories}; runs after the application's configuration is loaded.
 */
final class ConvergeStarterDefaults implements EnvironmentPostProcessor, Ordered {

  static final String SOURCE = "convergeStarterDefaults";
  static final String NAME_SERVER = "converge.rocketmq.name-server";
  static final List<String> NAME_SERVERS = List.of("converge.producer.name-server", "converge.outbox.name-server",
      "converge.consumer.rocketmq.name-server");

  ConvergeStarterDefaults() {
  }

  @Override
  public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
    Map<String, Object> defaults = new LinkedHashMap<>();
    defaults.put("converge.idempotency.enabled", "true");
    String nameServer = environment.getProperty(NAME_SERVER);
    if (nameServer != null && !nameServer.isBlank()) {
      NAME_SERVERS.forEach(name -> defaults.put(name, nameServer));
    }
    environment.getPropertySources().addLast(new MapPropertySource(SOURCE, defaults));
  }

  /** After the configuration data ({@code application.properties}, profiles) is loaded. */
  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
