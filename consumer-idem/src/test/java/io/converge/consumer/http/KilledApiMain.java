package io.converge.consumer.http;

import io.converge.broker.child.ChildJvm;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * A child JVM for {@link IdempotencyKillIT}: an API instance whose handler halts the JVM (as a kill -9
 * would) after the filter has claimed the key and before any response is stored.
 */
public final class KilledApiMain {

  /** Printed with the instance's base URL once it serves. */
  static final String READY = "READY ";
  /** Printed with the request's key just before the halt. */
  static final String HANDLING = "HANDLING ";

  private KilledApiMain() {
  }

  /** The database from {@link ChildJvm#database()}. */
  public static void main(String[] args) throws Exception {
    DataSource ds = ChildJvm.database();
    HttpServlet dying = new HttpServlet() {

      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) {
        ChildJvm.halt(HANDLING + req.getHeader("Idempotency-Key"));
      }
    };
    BareTomcat tomcat = new BareTomcat().mount("/api", IdempotencyKillIT.filter(ds), dying).start();
    ChildJvm.mark(READY + tomcat.base());
    Thread.sleep(Duration.ofMinutes(2).toMillis()); // keeps the JVM alive (Tomcat's threads are daemons) until the request halts it
    System.exit(1);
  }

  static List<IdempotentEndpoint> endpoints() {
    return List.of(IdempotentEndpoint.of("POST", "/**").withExpectedDuration(Duration.ofSeconds(1)));
  }
}
