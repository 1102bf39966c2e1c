package io.converge.consumer.http;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.List;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A child JVM for {@link IdempotencyKillIT}: an API instance whose handler halts the JVM (as a kill -9
 * would) after the filter has claimed the key and before any response is stored.
 */
public final class KilledApiMain {

  private KilledApiMain() {}

  /** Settings from system properties {@code kill.*}. */
  public static void main(String[] args) throws Exception {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(System.getProperty("kill.jdbc.url"));
    ds.setUser(System.getProperty("kill.jdbc.user"));
    ds.setPassword(System.getProperty("kill.jdbc.password"));
    ds.setCurrentSchema(System.getProperty("kill.schema"));
    HttpServlet dying = new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) {
        System.out.println("HANDLING " + req.getHeader("Idempotency-Key"));
        System.out.flush();
        Runtime.getRuntime().halt(137);
      }
    };
    BareTomcat tomcat = new BareTomcat().mount("/api", IdempotencyKillIT.filter(ds), dying).start();
    System.out.println("READY " + tomcat.base());
    System.out.flush();
    Thread.sleep(Duration.ofMinutes(2).toMillis()); // the test kills it long before
    System.exit(1);
  }

  static List<IdempotentEndpoint> endpoints() {
    return List.of(IdempotentEndpoint.of("POST", "/**").withExpectedDuration(Duration.ofSeconds(1)));
  }
}
