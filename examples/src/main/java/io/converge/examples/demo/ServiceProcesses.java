package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The saga's services as three OS processes ({@link #GROUPS}: order + payment, inventory, account +
 * notification), each a {@link ServiceProcess} on this JVM's class path, reaching PostgreSQL at the JDBC URL
 * {@code jdbcUrl} makes of the server's (a proxy's, in a chaos run). A process can be killed with -9 and started
 * again (with extra system properties, e.g. a skewed clock); the web services keep their ports across restarts.
 * Their meters are read from the files every incarnation of every process wrote. Thread-safe.
 */
public final class ServiceProcesses extends RunServices {

  /** The processes, by the services each runs. */
  public static final List<List<String>> GROUPS = List.of(List.of("order", "payment"), List.of("inventory"),
      List.of("account", "notification"));

  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
  /** How often a process that exits while it starts is launched, within {@link #START_TIMEOUT}. */
  private static final int START_ATTEMPTS = 3;

  private final Path dir;
  private final Map<Integer, List<String>> args = new LinkedHashMap<>();
  private final Map<Integer, Process> processes = new ConcurrentHashMap<>();
  private final Map<Integer, Path> logs = new ConcurrentHashMap<>();
  private final Map<Integer, Map<String, String>> extras = new ConcurrentHashMap<>();
  private final Map<String, Integer> ports = new LinkedHashMap<>();
  private int incarnation;

  private ServiceProcesses(Path dir, String run) {
    super(run);
    this.dir = dir;
  }

  /**
   * A {@link Services.Starter} of the three processes; logs and meter files go to {@code dir}; the services reach
   * PostgreSQL at {@code jdbcUrl.apply(pg.jdbcUrl())}; {@code jvmProperties} are added to every process.
   */
  public static Services.Starter starter(Path dir, UnaryOperator<String> jdbcUrl, Map<String, String> jvmProperties) {
    return (backend, pg, run, transport) -> {
      ServiceProcesses s = new ServiceProcesses(dir, run);
      // a Ctrl-C of the run leaves no service process behind
      Runtime.getRuntime().addShutdownHook(new Thread(() -> s.processes.values().forEach(Process::destroyForcibly),
          "service-processes-" + run));
      try {
        s.prepare(backend, pg, run, transport, jdbcUrl.apply(pg.jdbcUrl()), jvmProperties);
        List<Integer> all = new ArrayList<>();
        for (int g = 0; g < GROUPS.size(); g++) {
          s.launch(g, Map.of());
          all.add(g);
        }
        for (int g : all) {
          s.awaitReady(g);
        }
        return s;
      } catch (Exception e) {
        s.close();
        throw e;
      }
    };
  }

  private void prepare(Backend backend, ConvergePostgres pg, String run, Map<String, String> transport,
      String jdbcUrl, Map<String, String> jvmProperties) throws IOException {
    for (int g = 0; g < GROUPS.size(); g++) {
      List<String> a = new ArrayList<>();
      jvmProperties.forEach((k, v) -> a.add("-D" + k + "=" + v));
      a.add(ServiceProcess.class.getName());
      for (String name : GROUPS.get(g)) {
        DataSource db = newSchema(pg, name);
        Map<String, String> p = SagaServices.properties(name, backend, pg, jdbcUrl, db, run, transport);
        p.put("server.port", String.valueOf(freePort()));
        ports.put(name, Integer.parseInt(p.get("server.port")));
        a.add("@" + name);
        p.forEach((k, v) -> a.add("--" + k + "=" + v));
      }
      args.put(g, a);
    }
  }

  /** The group (index into {@link #GROUPS}) that runs service {@code name}. */
  public static int groupOf(String name) {
    for (int g = 0; g < GROUPS.size(); g++) {
      if (GROUPS.get(g).contains(name)) {
        return g;
      }
    }
    throw new IllegalArgumentException("no service " + name + ", but one of " + GROUPS);
  }

  private synchronized void launch(int group, Map<String, String> extra) throws IOException {
    extras.put(group, extra);
    int n = ++incarnation;
    String label = String.join("+", GROUPS.get(group));
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "-Dexamples.metrics-file=" + dir.resolve(label + "-" + n + ".meters")));
    extra.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    cmd.addAll(args.get(group));
    Path log = dir.resolve(label + "-" + n + ".log");
    processes.put(group, new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start());
    logs.put(group, log);
  }

  private void awaitReady(int group) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    int attempts = 1;
    while (true) {
      Process p = processes.get(group);
      Path log = logs.get(group);
      boolean exited = !p.isAlive();
      if (Files.exists(log) && Files.readAllLines(log).contains("READY")) {
        return;
      }
      if (exited && attempts < START_ATTEMPTS && System.nanoTime() < deadline) {
        // a start that failed (e.g. a broker call timed out on a loaded machine) is tried again, as a supervisor
        // restarts a crashed process; its log stays next to the next incarnation's
        attempts++;
        launch(group, extras.getOrDefault(group, Map.of()));
        continue;
      }
      if (exited || System.nanoTime() > deadline) {
        p.destroyForcibly();
        throw new IllegalStateException("services " + GROUPS.get(group) + " did not start ("
            + (exited ? "exit " + p.exitValue() : "timeout " + START_TIMEOUT) + "); see " + log + ", which ends:\n"
            + tail(log));
      }
      Thread.sleep(100); // the poll interval of a wait with a deadline
    }
  }

  private static String tail(Path log) throws IOException {
    List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  /** Kills the process of {@code group} with -9 (SIGKILL: no shutdown hook runs) and waits for its end. */
  public void kill(int group) throws InterruptedException {
    Process p = processes.get(group);
    p.destroyForcibly();
    p.waitFor();
  }

  /** Starts the process of {@code group} again, with system properties {@code extra}, and waits until it is ready. */
  public void restart(int group, Map<String, String> extra) throws IOException, InterruptedException {
    launch(group, extra);
    awaitReady(group);
  }

  /** Whether the process of {@code group} is running. */
  public boolean isAlive(int group) {
    return processes.get(group).isAlive();
  }

  /** The sum over every incarnation of every process of the meter {@code name} (0 when none wrote it). */
  public double meter(String name) {
    return meterFiles().mapToDouble(f -> read(f, name)).sum();
  }

  /** The value of gauge {@code name} in the running processes only. */
  public double gauge(String name) {
    double sum = 0;
    for (int g = 0; g < GROUPS.size(); g++) {
      Path log = logs.get(g);
      Path meters = Path.of(log.toString().replace(".log", ".meters"));
      if (Files.exists(meters)) {
        sum += read(meters, name);
      }
    }
    return sum;
  }

  private Stream<Path> meterFiles() {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".meters")).toList().stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double read(Path file, String name) {
    try {
      return Files.readAllLines(file).stream().filter(l -> l.startsWith(name + " "))
          .mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1))).findFirst().orElse(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Override
  public int port(String name) {
    return ports.get(name);
  }

  @Override
  public long consumerCount(String what) {
    return Math.round(meter("consumer." + what));
  }

  @Override
  public void close() {
    for (Process p : processes.values()) {
      p.destroyForcibly();
    }
    for (Process p : processes.values()) {
      try {
        p.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
