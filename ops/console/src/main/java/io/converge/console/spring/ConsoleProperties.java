package io.converge.console.spring;

import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.converge.console.web.ConsoleServlet;
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
 * @param roleHeader the request header listing (comma-separated) the roles of the operator named by
 *     {@code operatorHeader}, set by the same proxy; default none: such an operator reads but cannot act
 * @param actionRole the role or authority an operator needs to act; default {@code CONVERGE_OPERATOR}
 * @param readRole the role or authority needed to read the console (the action role reads too); default none:
 *     anyone on a loopback-only console, the action role's holders when {@code allowRemote}
 * @param allowRemote whether requests from other hosts, or through a proxy, are served; default false (this
 *     host only, no forwarding header)
 * @param thresholds per kind ({@code outbox-parked: 2m}), the others keep their defaults
 */
@ConfigurationProperties("converge.console")
record ConsoleProperties(@DefaultValue("false") boolean enabled, @DefaultValue("/converge/console") String path,
    String operatorHeader, String roleHeader, @DefaultValue(ConsoleServlet.DEFAULT_ACTION_ROLE) String actionRole,
    String readRole, @DefaultValue("false") boolean allowRemote, Map<StuckKind, Duration> thresholds) {

  ConsoleProperties {
    if (!path.matches("(/[A-Za-z0-9._-]+)+")) {
      throw new IllegalArgumentException("converge.console.path must be /segment[/segment...], but was " + path);
    }
    if (actionRole.isBlank()) {
      throw new IllegalArgumentException("converge.console.action-role must not be blank, but was '" + actionRole
          + "'");
    }
  }

  StuckThresholds stuckThresholds() {
    return StuckThresholds.defaults().with(thresholds);
  }
}
