package io.converge.ops.dist;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The converge distribution built by this module's package phase ({@code target/converge}, system property
 * {@code converge.dist}), run as a person runs it: {@code bin/converge} in a child process with {@code java}
 * alone.
 */
final class Dist {

  private Dist() {
  }

  /** The distribution's directory (bin/, lib/, lib/dev/). */
  static Path home() {
    Path home = Path.of(System.getProperty("converge.dist", "target/converge")).toAbsolutePath().normalize();
    if (!Files.isExecutable(home.resolve("bin/converge"))) {
      throw new IllegalStateException("no distribution at " + home + ": it is built by the package phase of ops");
    }
    return home;
  }

  /** The root of the clone (the READMEs). */
  static Path root() {
    return Path.of(System.getProperty("converge.root", "..")).toAbsolutePath().normalize();
  }

  /**
   * One run of {@code home/bin/converge args...} with {@code env} added to the environment.
   *
   * @param status the exit status
   * @param out stdout
   * @param err stderr
   */
  record Run(int status, String out, String err) {

    /** Both streams, for assertion messages. */
    String both() {
      return "exit " + status + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
  }

  /** The migrations of the schema the distribution's database commands run on: every module's tables. */
  static final String[] MIGRATIONS = {"producer", "outbox", "consumer", "pulsar"};

  /** Runs {@code home/bin/converge args...}; a run longer than 2 minutes is killed and fails. */
  static Run run(Path home, Map<String, String> env, List<String> args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/converge").toString());
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().put("JAVA_OPTS", "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1");
    pb.environment().remove("CONVERGE_DB_PASSWORD");
    pb.environment().putAll(env);
    Path out = Files.createTempFile("converge-out", ".txt");
    Path err = Files.createTempFile("converge-err", ".txt");
    try {
      Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(2, TimeUnit.MINUTES)) {
        p.destroyForcibly().waitFor();
        throw new AssertionError("converge " + args + " did not end within 2 minutes: " + Files.readString(err));
      }
      return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
