package io.converge.console.spring;

import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code converge.console.*}: the console embedded in a Spring Boot service.
 *
 * @param enabled whether it is served; default false
 * @param path where; default {@code /converge/console}
 * @param operatorHeader the request header naming the operator when there is no authenticated principal (set
 *     it only behind a proxy that authenticates and sets it); default none: without a principal, look only
 * @param allowRemote whether requests from other hosts are served; default false (this host only)
 * @param thresholds per kind ({@code outbox-parked: 2m}), the others keep their defaults
 */
@ConfigurationProperties("converge.console")
record ConsoleProperties(@DefaultValue("false") boolean enabled, @DefaultValue("/converge/console") String path,
    String operatorHeader, @DefaultValue("false") boolean allowRemote, Map<StuckKind, Duration> thresholds) {

  ConsoleProperties {
    if (!path.matches("(/[A-Za-z0-9._-]+)+")) {
      throw new IllegalArgumentException("converge.console.path must be /segment[/segment...], but was " + path);
    }
  }

  StuckThresholds stuckThresholds() {
    return StuckThresholds.defaults().with(thresholds);
  }
}
