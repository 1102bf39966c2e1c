package io.converge.broker.child;

import io.converge.broker.internal.Poll;
import io.converge.broker.EmbeddedServerException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A JVM a crash test starts with the test's own classpath and a main class; the child halts itself
 * ({@link #halt(String)}, {@code Runtime.halt}: no shutdown hook, no finally, like kill -9) at the
 * point the test names. Its output (stdout and stderr) goes to a log file the test reads. Started by
 * {@link ChildJvms#launch(Class)} (given by {@link ChildJvmExtension}, which stops the child after the
 * test and adds its output to a failure). Thread-safe.
 *
 * @param name the main class's simple name
 * @param process the child process
 * @param log the file that receives the child's output
 */
public record ChildJvm(String name, Process process, Path log) implements AutoCloseable {

  /** The exit status of a child that {@link #halt(String) halted}, as after kill -9. */
  public static final int HALTED = 137;

  private static final String DB = "converge.child.db.";

  // ---- in the child ----

  /**
   * In the child: prints {@code marker} (the line the test waits for), then halts the JVM with
   * {@link #HALTED}. Never returns.
   */
  public static void halt(String marker) {
    System.out.println(marker);
    System.out.flush();
    Runtime.getRuntime().halt(HALTED);
  }

  /** In the child: prints {@code marker} as a line of its own, for {@link #awaitLine}. */
  public static void mark(String marker) {
    System.out.println(marker);
    System.out.flush();
  }

  /** In the child: the database {@link Builder#database} passed, on its schema. */
  public static DataSource database() {
    PGSimpleDataSource db = new PGSimpleDataSource();
    db.setUrl(System.getProperty(DB + "url"));
    db.setUser(System.getProperty(DB + "user"));
    db.setPassword(System.getProperty(DB + "password", ""));
    db.setCurrentSchema(System.getProperty(DB + "schema"));
    return db;
  }

  // ---- in the test ----

  /** Everything the child printed so far. */
  public String output() {
    try {
      return Files.exists(log) ? Files.readString(log) : "";
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  /**
   * Waits for a line of the child's output that starts with {@code prefix}, and returns it.
   *
   * @throws AssertionError with the output when the child exits or {@code timeout} passes first
   */
  public String awaitLine(String prefix, Duration timeout) throws InterruptedException {
    String line = Poll.value(timeout, Poll.EVERY, () -> {
      boolean exited = !process.isAlive(); // read before the output: a line printed just before the exit counts
      String found = output().lines().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
      if (found == null && exited) {
        throw noLine(prefix, "before it exited with " + process.exitValue());
      }
      return found;
    });
    if (line == null) {
      throw noLine(prefix, "within " + timeout);
    }
    return line;
  }

  private AssertionError noLine(String prefix, String when) {
    return new AssertionError(name + " printed no line starting with '" + prefix + "' " + when + "; output:\n"
        + output());
  }

  /**
   * Waits for the child to exit and returns its status.
   *
   * @throws AssertionError with the output when it is still running after {@code timeout} (it is then killed)
   */
  public int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(name + " did not exit within " + timeout + "; output:\n" + output());
    }
    return process.exitValue();
  }

  /** Kills the child if it still runs. Idempotent. */
  @Override
  public void close() {
    process.destroyForcibly();
  }

  /** Options of a child before its start. Not thread-safe. */
  public static final class Builder {

    private final Class<?> main;
    private final Path dir;
    private final java.util.function.Consumer<ChildJvm> started;
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final List<String> args = new ArrayList<>();
    private String heap = "256m";
    private Predicate<String> classpath = entry -> true;

    Builder(Class<?> main, Path dir, java.util.function.Consumer<ChildJvm> started) {
      this.main = main;
      this.dir = dir;
      this.started = started;
    }

    /** The maximum heap ({@code -Xmx}); default 256m. */
    public Builder heap(String heap) {
      this.heap = heap;
      return this;
    }

    /** A system property of the child. */
    public Builder property(String name, Object value) {
      properties.put(name, String.valueOf(value));
      return this;
    }

    /** The database and schema the child reaches with {@link ChildJvm#database()}. */
    public Builder database(String jdbcUrl, String user, String password, String schema) {
      return property(DB + "url", jdbcUrl).property(DB + "user", user).property(DB + "password", password)
          .property(DB + "schema", schema);
    }

    /** Keeps only the entries of the test's classpath that {@code keep} accepts (a child lacking a jar). */
    public Builder classpath(Predicate<String> keep) {
      this.classpath = keep;
      return this;
    }

    /** Arguments of the main method. */
    public Builder args(String... args) {
      this.args.addAll(List.of(args));
      return this;
    }

    /**
     * Starts the child.
     *
     * @throws EmbeddedServerException when the java command cannot be started
     */
    public ChildJvm start() {
      List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx" + heap, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
          String.join(java.io.File.pathSeparator,
              List.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                  .stream().filter(classpath).toList())));
      properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
      cmd.add(main.getName());
      cmd.addAll(args);
      try {
        Path log = Files.createTempFile(dir, main.getSimpleName() + "-", ".log");
        Process process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        ChildJvm child = new ChildJvm(main.getSimpleName(), process, log);
        started.accept(child);
        return child;
      } catch (IOException e) {
        throw new EmbeddedServerException("Cannot start a child JVM running " + main.getName(), e);
      }
    }
  }
}
