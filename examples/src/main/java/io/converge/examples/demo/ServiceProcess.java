package io.converge.examples.demo;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One OS process of the saga: the services named on its command line, each a Spring Boot application as in
 * {@link SagaServices}. Arguments: {@code @<service>} starts a service's section, the {@code --key=value} after it
 * are its properties. Prints {@code PORT <service> <port>} per service, then {@code READY}. Every
 * {@link #DUMP_MILLIS} ms it writes its meters (counters summed by name, gauges, timers' count/total/max in ms) as
 * {@code name value} lines to the file named by system property {@code examples.metrics-file}, if set, so that a
 * process killed with -9 leaves what it counted behind. Runs until killed.
 */
public final class ServiceProcess {

  /** How often the meters are written. */
  static final long DUMP_MILLIS = 500;

  private ServiceProcess() {
  }

  public static void main(String[] args) throws Exception {
    Map<String, Map<String, String>> services = new LinkedHashMap<>();
    Map<String, String> current = null;
    for (String a : args) {
      if (a.startsWith("@")) {
        current = new LinkedHashMap<>();
        services.put(a.substring(1), current);
      } else if (current != null && a.startsWith("--") && a.indexOf('=') > 2) {
        current.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
      } else {
        throw new IllegalArgumentException("expected @<service> or --key=value after one, but was " + a);
      }
    }
    List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    for (Map.Entry<String, Map<String, String>> s : services.entrySet()) {
      ConfigurableApplicationContext ctx;
      try {
        ctx = SagaServices.run(s.getKey(), s.getValue());
      } catch (RuntimeException e) {
        // a service that cannot start ends the process (the others' threads would keep it alive): the parent sees
        // the exit at once and may start it again, as a supervisor does
        e.printStackTrace();
        System.out.println("FAILED " + s.getKey() + ": " + e);
        contexts.forEach(ConfigurableApplicationContext::close);
        System.exit(1);
        return;
      }
      contexts.add(ctx);
      System.out.println("PORT " + s.getKey() + " " + ctx.getEnvironment().getProperty("local.server.port", "none"));
    }
    String file = System.getProperty("examples.metrics-file");
    if (file != null) {
      Path path = Path.of(file);
      Thread dump = new Thread(() -> {
        while (true) {
          try {
            write(path, contexts);
            TimeUnit.MILLISECONDS.sleep(DUMP_MILLIS); // the dump's period, not a synchronisation
          } catch (InterruptedException e) {
            return;
          } catch (IOException | RuntimeException e) {
            System.err.println("cannot write the meters to " + path + ": " + e);
          }
        }
      }, "service-meters");
      dump.setDaemon(true);
      dump.start();
      write(path, contexts);
    }
    System.out.println("READY");
    System.out.flush();
    Thread.currentThread().join();
  }

  private static synchronized void write(Path path, List<ConfigurableApplicationContext> contexts) throws IOException {
    Map<String, Double> values = new TreeMap<>();
    for (ConfigurableApplicationContext ctx : contexts) {
      for (Meter m : SagaServices.meters(ctx).getMeters()) {
        String n = m.getId().getName();
        if (m instanceof Counter c) {
          values.merge(n, c.count(), Double::sum);
          if (n.equals("tcc.barrier.calls")) { // per operation and outcome too: a DUPLICATE Confirm, say
            values.merge(n + "." + m.getId().getTag("operation") + "." + m.getId().getTag("outcome"), c.count(),
                Double::sum);
          }
        } else if (m instanceof Gauge g && (n.startsWith("saga.") || n.startsWith("txn."))) {
          values.merge(n, g.value(), Double::sum);
        } else if (m instanceof Timer t) {
          values.merge(n + ".count", (double) t.count(), Double::sum);
          values.merge(n + ".total_ms", t.totalTime(TimeUnit.MILLISECONDS), Double::sum);
          values.merge(n + ".max_ms", t.max(TimeUnit.MILLISECONDS), Math::max);
        }
      }
    }
    StringBuilder b = new StringBuilder();
    values.forEach((k, v) -> b.append(k).append(' ').append(v).append('\n'));
    Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
    Files.writeString(tmp, b);
    Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
