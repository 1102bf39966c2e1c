package io.converge.broker.pulsar;

import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Freezer;
import io.converge.broker.internal.Processes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Pulsar 4.2.4 (broker, one bookie, transaction coordinator, in-memory metadata) on 127.0.0.1,
 * running in a child JVM with its own classpath: its netty, grpc, protobuf and RocksDB differ from the
 * RocketMQ broker's, so the two never share a class loader.
 *
 * <p>Start takes about 3 s on an idle 2-core machine and up to 45 s under load: start one per JVM
 * ({@link PulsarExtension}). The child stops with {@link #stop()}, and by itself when this JVM dies
 * (its standard input closes). Its log is {@code pulsar.log} in the data directory, kept after a
 * failed start. Thread-safe.
 */
public final class EmbeddedPulsar implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPulsar.class);
  private static final String MAIN = "io.converge.broker.pulsar.server.PulsarServerMain";
  private static final String READY = "CONVERGE-PULSAR-READY";
  /** What Pulsar's own launch script opens: without them its JVM and container metrics log stack traces. */
  private static final List<String> REQUIRED_JVM_OPTIONS = List.of(
      "--add-opens", "java.base/java.io=ALL-UNNAMED",
      "--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
      "--add-opens", "java.base/sun.net=ALL-UNNAMED",
      "--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED",
      "--add-opens", "java.management/sun.management=ALL-UNNAMED",
      "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
      "-Dio.netty.tryReflectionSetAccessible=true");

  private final Path dataDir;
  private final boolean temporary;
  private final Duration startTimeout;
  private final List<String> jvmOptions;
  private final Map<String, String> brokerSettings;
  private final boolean restartable;
  /** The ports of the first start, kept by {@link #restart()} (0 until then). */
  private int brokerPort;
  private int webPort;
  private final Freezer freezer = new Freezer("Embedded Pulsar");
  private Process process;
  private String serviceUrl;
  private String httpUrl;
  private Thread shutdownHook;

  private EmbeddedPulsar(Path dataDir, boolean temporary, Duration startTimeout, List<String> jvmOptions,
      Map<String, String> brokerSettings, boolean restartable) {
    this.restartable = restartable;
    this.dataDir = dataDir;
    this.temporary = temporary;
    this.startTimeout = startTimeout;
    this.jvmOptions = jvmOptions;
    this.brokerSettings = brokerSettings;
  }

  /** A builder with the defaults documented on its methods. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Launches the child JVM and waits until Pulsar accepts clients.
   *
   * @return this
   * @throws PulsarStartException with the tail of the child's log when it exits or times out
   * @throws PulsarArtifactMissingException when a jar of the child's classpath is not in the local
   *     Maven repository
   * @throws EmbeddedServerException naming the data directory when it is not writable
   */
  public synchronized EmbeddedPulsar start() {
    if (process != null) {
      return this;
    }
    Dirs.requireWritable(dataDir, "Embedded Pulsar data");
    String classpath = ChildClasspath.resolve(EmbeddedPulsar.class.getClassLoader());
    Path log = dataDir.resolve("pulsar.log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(REQUIRED_JVM_OPTIONS);
    command.addAll(jvmOptions);
    command.add("-Dlog4j2.configurationFile=converge-pulsar-log4j2.xml");
    command.add("-Dpulsar.allocator.exit_on_oom=true");
    if (restartable) {
      command.add("-Dconverge.pulsar.durable=true");
    }
    command.add("-cp");
    command.add(classpath);
    command.add(MAIN);
    command.add(dataDir.resolve("data").toString());
    brokerSettings.forEach((name, value) -> command.add(name + "=" + value));
    if (brokerPort > 0) {
      // a restart: clients reconnect to the URLs they had
      command.add("brokerServicePort=" + brokerPort);
      command.add("webServicePort=" + webPort);
    }
    long t0 = System.nanoTime();
    try {
      process = new ProcessBuilder(command).redirectError(log.toFile()).start();
    } catch (IOException e) {
      throw new EmbeddedServerException("Cannot launch the Pulsar child JVM (" + command.get(0) + ")", e);
    }
    shutdownHook = new Thread(() -> {
      destroy();
      if (temporary) {
        Dirs.deleteQuietly(dataDir);
      }
    }, "converge-pulsar-child-stop");
    Runtime.getRuntime().addShutdownHook(shutdownHook);
    CompletableFuture<String> ready = CompletableFuture.supplyAsync(this::readReadyLine, runnable -> {
      Thread t = new Thread(runnable, "converge-pulsar-stdout");
      t.setDaemon(true);
      t.start();
    });
    String line;
    try {
      line = ready.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException | InterruptedException e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      Process failed = process;
      kill(failed);
      forget();
      // the data directory is kept, temporary or not: its log is what explains the failure
      String reason = e instanceof TimeoutException ? "did not start within " + startTimeout
          : e instanceof InterruptedException ? "start was interrupted"
              : "child JVM exited with code " + exitCode(failed) + " before it was ready";
      throw new PulsarStartException(reason, log, tail(log),
          e instanceof ExecutionException ? e.getCause() : e instanceof InterruptedException ? e : null);
    }
    for (String part : line.split(" ")) {
      if (part.startsWith("serviceUrl=")) {
        serviceUrl = part.substring("serviceUrl=".length());
      } else if (part.startsWith("httpUrl=")) {
        httpUrl = part.substring("httpUrl=".length());
      }
    }
    brokerPort = URI.create(serviceUrl).getPort();
    webPort = URI.create(httpUrl).getPort();
    LOG.info("Embedded Pulsar started in {} ms: {} {}", (System.nanoTime() - t0) / 1_000_000, serviceUrl, httpUrl);
    return this;
  }

  /**
   * Kills the child JVM ({@code SIGKILL}: no clean shutdown, as a broker host that dies) and keeps its data. For a
   * server built {@link Builder#restartable() restartable}, {@link #start()} then starts it again on its data and
   * ports; {@link #restart()} does both.
   *
   * @throws EmbeddedServerException when Pulsar is not started or not restartable
   */
  public synchronized void kill() {
    requireStarted();
    if (!restartable) {
      throw new EmbeddedServerException("EmbeddedPulsar is not restartable: build it with restartable()");
    }
    freezer.thaw();
    Process p = process;
    p.destroyForcibly();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        throw new EmbeddedServerException("the Pulsar child JVM " + p.pid() + " did not die within 10 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    forget();
  }

  /**
   * Kills the child JVM and starts it again on the same data directory and ports: its topics, ledgers and
   * transaction coordinators recover as a restarted broker's do.
   *
   * @return how long the new process took until it accepted clients
   * @throws EmbeddedServerException when not started or not {@link Builder#restartable() restartable}
   * @throws PulsarStartException when the restart fails (its log is kept)
   */
  public synchronized Duration restart() {
    kill();
    long t0 = System.nanoTime();
    start();
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  private String readReadyLine() {
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    try {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(READY)) {
          drainInBackground(out);
          return line;
        }
      }
    } catch (IOException e) {
      throw new EmbeddedServerException("Lost the Pulsar child's output", e);
    }
    throw new EmbeddedServerException("the Pulsar child JVM exited before it was ready");
  }

  private static void drainInBackground(BufferedReader out) {
    Thread t = new Thread(() -> {
      try {
        while (out.readLine() != null) {
          // the child prints nothing else of interest; keep its pipe from filling up
        }
      } catch (IOException e) {
        // child gone
      }
    }, "converge-pulsar-stdout-drain");
    t.setDaemon(true);
    t.start();
  }

  /** The binary service URL, {@code pulsar://127.0.0.1:port}. */
  public synchronized String serviceUrl() {
    requireStarted();
    return serviceUrl;
  }

  /** The HTTP (admin) URL, {@code http://127.0.0.1:port}. */
  public synchronized String httpUrl() {
    requireStarted();
    return httpUrl;
  }

  /** The child JVM while it runs; for tests that check that nothing is left behind. */
  synchronized java.util.Optional<ProcessHandle> childProcess() {
    return java.util.Optional.ofNullable(process).map(Process::toHandle);
  }

  /**
   * Freezes the Pulsar child JVM ({@code SIGSTOP}): its broker, bookie and coordinator stop answering
   * while their sockets stay open, as in a long GC pause or a stalled host, until {@link #thaw()}. For
   * outage tests; idempotent while frozen.
   *
   * @throws EmbeddedServerException when Pulsar is not started or the signal cannot be sent
   */
  public synchronized void freeze() {
    requireStarted();
    freezer.freeze(process.pid());
  }

  /** Continues the child JVM after {@link #freeze()}. Idempotent. */
  public void thaw() {
    freezer.thaw();
  }

  /** Whether the child JVM is frozen now. */
  public boolean isFrozen() {
    return freezer.isFrozen();
  }

  /** The directory of the child's data and log. */
  public Path dataDir() {
    return dataDir;
  }

  /** Stops the child JVM (closing its input, then forcibly after 20 s) and deletes a temporary data dir. Idempotent. */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    destroy();
    forget();
    if (temporary) {
      Dirs.deleteQuietly(dataDir);
    }
  }

  private void forget() {
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down
    }
    process = null;
    serviceUrl = null;
    httpUrl = null;
  }

  /**
   * Ends a child with SIGTERM (its shutdown hook runs), then SIGKILL after 10 s: a child that is not ready (it reads
   * its stdin only once ready, so closing it would not stop a child that hangs in its start) or that did not stop
   * when its stdin closed.
   */
  private static void kill(Process p) {
    p.destroy();
    Processes.awaitOrKill(p, Duration.ofSeconds(10), Duration.ofSeconds(5));
  }

  private static String exitCode(Process p) {
    return p.isAlive() ? "(still running)" : String.valueOf(p.exitValue());
  }

  private void destroy() {
    freezer.thaw(); // a stopped JVM reads no stdin and handles no SIGTERM
    Process p = process;
    if (p == null || !p.isAlive()) {
      return;
    }
    try {
      p.getOutputStream().close();
    } catch (IOException e) {
      p.destroyForcibly();
      return;
    }
    if (!Processes.awaitExit(p, Duration.ofSeconds(20))) {
      kill(p);
    }
  }

  @Override
  public void close() {
    stop();
  }

  private void requireStarted() {
    if (process == null) {
      throw new EmbeddedServerException("EmbeddedPulsar is not started: call start() first");
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Builds an {@link EmbeddedPulsar}; not thread-safe. */
  public static final class Builder {

    private Path dataDir;
    private static final Pattern SETTING_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private Duration startTimeout = Duration.ofSeconds(120);
    private final Map<String, String> brokerSettings = new LinkedHashMap<>();
    private boolean restartable;
    private final List<String> jvmOptions = new ArrayList<>(List.of(
        "-Xmx768m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Djava.net.preferIPv4Stack=true"));

    private Builder() {
    }

    /** The data directory; default a new temporary directory, deleted on {@link #stop()}. */
    public Builder dataDir(Path dir) {
      this.dataDir = Objects.requireNonNull(dir, "dataDir");
      return this;
    }

    /** How long to wait for the child to be ready; default 120 s (a start takes 3-45 s). */
    public Builder startTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("pulsar.startTimeout must be positive, but was " + timeout);
      }
      this.startTimeout = timeout;
      return this;
    }

    /** Adds an option of the child JVM (defaults: -Xmx768m, serial GC, C1 only). */
    public Builder jvmOption(String option) {
      jvmOptions.add(Objects.requireNonNull(option, "option"));
      return this;
    }

    /**
     * Sets a broker setting, named as in Pulsar's {@code broker.conf} (a field of its
     * {@code ServiceConfiguration}), e.g. {@code maxMessageSize}. It overrides the embedded defaults
     * (loopback, free ports, transactions on, one bookie); an unknown name makes {@link #start()}
     * fail with a {@link PulsarStartException} that names it. None by default.
     *
     * @throws IllegalArgumentException when the name is not an identifier or the value spans lines
     */
    public Builder brokerSetting(String name, String value) {
      if (name == null || !SETTING_NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("pulsar.brokerSetting name must be a Java identifier, but was " + name);
      }
      if (value == null || value.contains("\n") || value.contains("\r")) {
        throw new IllegalArgumentException("pulsar.brokerSetting." + name + " must be one line, but was " + value);
      }
      brokerSettings.put(name, value);
      return this;
    }

    /**
     * Sets the broker settings of a {@code broker.conf} file ({@code name=value} lines, {@code #} comments), e.g.
     * {@code ops/deploy/pulsar/broker.conf}: each as {@link #brokerSetting(String, String)}, so a name that is not a
     * Pulsar setting fails the start.
     *
     * @throws EmbeddedServerException naming the file when it cannot be read
     * @throws IllegalArgumentException naming the line that is not {@code name=value}
     */
    public Builder brokerSettings(Path file) {
      List<String> lines;
      try {
        lines = Files.readAllLines(file);
      } catch (IOException e) {
        throw new EmbeddedServerException("Cannot read the Pulsar broker settings " + file, e);
      }
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (line.isEmpty() || line.startsWith("#")) {
          continue;
        }
        int eq = line.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(file + ":" + (i + 1) + " must be name=value, but was " + line);
        }
        brokerSetting(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
      }
      return this;
    }

    /**
     * Keeps the metadata and the bookie's ledgers in the data directory, so {@link EmbeddedPulsar#restart()} can
     * kill the child JVM and start it again on them (default: in-memory metadata, ledgers cleared at each start).
     */
    public Builder restartable() {
      this.restartable = true;
      return this;
    }

    /** Builds the (not yet started) server. */
    public EmbeddedPulsar build() {
      boolean temporary = dataDir == null;
      return new EmbeddedPulsar(temporary ? Dirs.temp("converge-pulsar-") : dataDir, temporary, startTimeout,
          List.copyOf(jvmOptions), Collections.unmodifiableMap(new LinkedHashMap<>(brokerSettings)), restartable);
    }
  }
}
