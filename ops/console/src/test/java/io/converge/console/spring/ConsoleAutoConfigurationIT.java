package io.converge.console.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.PostgresExtension;
import io.converge.console.web.Console;
import io.converge.console.web.ConsoleServlet;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;

/**
 * What {@code converge.console.*} turns on in a Spring Boot service: off unless enabled; enabled, the console on
 * the application's data source (its audit table migrated) and its servlet at the configured path, serving this
 * host only, acting as the principal or the configured header when they hold the action role (the header's
 * operator through the role header), reading only otherwise.
 */
@ExtendWith(PostgresExtension.class)
class ConsoleAutoConfigurationIT {

  private WebApplicationContextRunner runner(DataSource ds) {
    return new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ConvergeConsoleAutoConfiguration.class))
        .withBean(DataSource.class, () -> ds);
  }

  @Test
  void offUnlessEnabled(DataSource ds) {
    runner(ds).run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Console.class));
  }

  @Test
  void enabledServesTheConsoleAtItsPathToThisHostAsThePrincipalOrHeader(DataSource ds) {
    runner(ds).withPropertyValues("converge.console.enabled=true", "converge.console.path=/ops/console",
        "converge.console.operator-header=X-Operator",
        "converge.console.role-header=X-Operator-Roles", "converge.console.thresholds.outbox-parked=2m")
        .run(context -> {
          assertThat(context).hasNotFailed().hasSingleBean(Console.class);
          ServletRegistrationBean<?> registration = context.getBean(ServletRegistrationBean.class);
          assertThat(registration.getUrlMappings()).containsExactly("/ops/console/*");
          ConsoleServlet servlet = (ConsoleServlet) registration.getServlet();
          assertThat(context.getBean(Console.class).context().inspector().thresholds()
              .of(io.converge.console.inspect.StuckKind.OUTBOX_PARKED)).hasMinutes(2);
          try (Connection c = ds.getConnection();
              Statement s = c.createStatement();
              ResultSet rs = s.executeQuery("SELECT count(*) FROM converge_console_audit")) {
            assertThat(rs.next()).isTrue();
          }

          Served overview = serve(servlet, "127.0.0.1", "/", null, Map.of());
          assertThat(overview.status).isEqualTo(200);
          assertThat(overview.body).contains("What is stuck").contains("href=\"/ops/console/kind/outbox-parked\"");
          Served asPrincipal = serve(servlet, "127.0.0.1", "/confirm", "alice",
              Map.of("action", "discard-dead-letter", "target", "7"));
          assertThat(asPrincipal.body).contains("Recorded as <strong>alice</strong>").contains("name=\"token\"");
          Served asHeader = serve(servlet, "::1", "/confirm", null,
              Map.of("action", "discard-dead-letter", "target", "7", "X-Operator", "bob",
                  "X-Operator-Roles", "AUDITOR, CONVERGE_OPERATOR"));
          assertThat(asHeader.body).contains("Recorded as <strong>bob</strong>");
          Served headerWithoutRole = serve(servlet, "::1", "/confirm", null,
              Map.of("action", "discard-dead-letter", "target", "7", "X-Operator", "eve", "X-Operator-Roles",
                  "AUDITOR"));
          assertThat(headerWithoutRole.body).contains("may read the console but not act")
              .doesNotContain("name=\"token\"");
          Served anonymous = serve(servlet, "127.0.0.1", "/confirm", null,
              Map.of("action", "discard-dead-letter", "target", "7"));
          assertThat(anonymous.body).contains("cannot record the decision").doesNotContain("name=\"token\"");
          assertThat(serve(servlet, "10.1.2.3", "/", "alice", Map.of()).status).as("another host").isEqualTo(403);
        });
  }

  private record Served(int status, String body) {
  }

  /** Runs one GET through the servlet; {@code params} holds the query parameters and the X-Operator header. */
  private static Served serve(ConsoleServlet servlet, String remote, String path, String principal,
      Map<String, String> params) throws Exception {
    HttpServletRequest req = (HttpServletRequest) Proxy.newProxyInstance(ConsoleAutoConfigurationIT.class
        .getClassLoader(), new Class<?>[]{HttpServletRequest.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getRemoteAddr" -> remote;
          case "getLocalAddr" -> remote.equals("::1") ? "::1" : remote.startsWith("127.") ? "127.0.0.1" : "10.0.0.1";
          case "isUserInRole" -> principal != null && "CONVERGE_OPERATOR".equals(args[0]);
          case "getMethod" -> "GET";
          case "getPathInfo" -> path;
          case "getUserPrincipal" -> principal == null ? null : (Principal) () -> principal;
          case "getHeader" -> params.get((String) args[0]);
          case "getParameterMap" -> params.entrySet().stream()
              .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> new String[]{e.getValue()}));
          default -> null;
        });
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    int[] status = {200};
    ServletOutputStream out = new ServletOutputStream() {

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {
      }

      @Override
      public void write(int b) {
        body.write(b);
      }
    };
    HttpServletResponse resp = (HttpServletResponse) Proxy.newProxyInstance(ConsoleAutoConfigurationIT.class
        .getClassLoader(), new Class<?>[]{HttpServletResponse.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "setStatus", "sendError" -> status[0] = (Integer) args[0];
            case "getOutputStream" -> {
              return out;
            }
            default -> {
            }
          }
          return null;
        });
    servlet.service(req, resp);
    return new Served(status[0], body.toString(StandardCharsets.UTF_8));
  }
}
