package io.converge.ops.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * The CPU a scenario's measured runs cost, per operation: of the bench JVM (the embedded RocketMQ broker included,
 * as it runs in that JVM) and of the PostgreSQL server (its postmaster and every backend, read from
 * {@code /proc}). Pulsar's child JVM is not counted. Immutable.
 *
 * @param ops operations of the measured runs
 * @param jvmNanos CPU time of the bench JVM over those runs
 * @param postgresNanos CPU time of the PostgreSQL server over those runs; -1 when unknown (not Linux, or a server
 *     on another machine)
 */
public record CpuCost(long ops, long jvmNanos, long postgresNanos) {

  /** Linux's USER_HZ: the unit of the times in {@code /proc/PID/stat} (100 on every mainstream kernel). */
  private static final long NANOS_PER_TICK = 10_000_000L;

  /** No runs yet. */
  public static final CpuCost NONE = new CpuCost(0, 0, 0);

  /** This cost plus that of a run of {@code runOps} operations between readings {@code from} and {@code to}. */
  public CpuCost plus(long runOps, Reading from, Reading to) {
    return plus(runOps, to.jvmNanos() - from.jvmNanos(),
        from.postgresNanos() < 0 || to.postgresNanos() < 0 ? -1 : to.postgresNanos() - from.postgresNanos());
  }

  /** This cost plus one run's. */
  CpuCost plus(long runOps, long runJvmNanos, long runPostgresNanos) {
    long pg = postgresNanos < 0 || runPostgresNanos < 0 ? -1 : postgresNanos + runPostgresNanos;
    return new CpuCost(ops + runOps, jvmNanos + runJvmNanos, pg);
  }

  /** Milliseconds of the bench JVM's CPU per 1,000 operations; NaN without operations. */
  public double jvmMillisPer1000() {
    return ops == 0 ? Double.NaN : jvmNanos / 1e6 * 1000 / ops;
  }

  /** Milliseconds of PostgreSQL's CPU per 1,000 operations; NaN when unknown or without operations. */
  public double postgresMillisPer1000() {
    return ops == 0 || postgresNanos < 0 ? Double.NaN : postgresNanos / 1e6 * 1000 / ops;
  }

  /** Milliseconds of CPU in all, as {@code JVM 12.3 ms, PostgreSQL 4.5 ms} ({@code PostgreSQL -} when unknown). */
  public String total() {
    return String.format("JVM %.1f ms, PostgreSQL %s", jvmNanos / 1e6, millis(postgresNanos < 0 ? Double.NaN
        : postgresNanos / 1e6));
  }

  /** Milliseconds of CPU per 1,000 {@code unit}s, as {@code JVM 12.3 ms, PostgreSQL 4.5 ms per 1,000 msgs}. */
  public String perThousand(String unit) {
    return String.format("JVM %.1f ms, PostgreSQL %s per 1,000 %ss", jvmMillisPer1000(),
        millis(postgresMillisPer1000()), unit);
  }

  /** The report's line for scenario {@code name}: {@code   CPU of <name>  JVM 12.3 ms, ... per 1,000 msgs}. */
  public String line(String name, String unit) {
    return String.format("  CPU of %-22s %s", name, perThousand(unit));
  }

  private static String millis(double ms) {
    return Double.isNaN(ms) ? "-" : String.format("%.1f ms", ms);
  }

  /**
   * The CPU time, in nanoseconds, of the bench JVM and of the PostgreSQL server at one moment.
   *
   * @param jvmNanos CPU time of the bench JVM so far
   * @param postgresNanos CPU time of the PostgreSQL server so far; -1 when unknown
   */
  public record Reading(long jvmNanos, long postgresNanos) {
  }

  /**
   * Reads the CPU time of the bench JVM and of the PostgreSQL server behind a data source; a sample before and one
   * after a measured run give its cost ({@link #plus(long, Reading, Reading)}). Thread-safe (immutable).
   */
  public static final class Meter {

    private final OptionalLong postmaster;

    private Meter(OptionalLong postmaster) {
      this.postmaster = postmaster;
    }

    /** A meter of this JVM and of the server behind {@code db} (null: this JVM only, PostgreSQL unknown). */
    public static Meter of(DataSource db) {
      return new Meter(postmaster(db));
    }

    /** The CPU times now; PostgreSQL's is -1 when its server is not on this machine. */
    public Reading now() {
      return new Reading(jvmNow(), postmaster.isPresent() ? treeNow(postmaster.getAsLong()) : -1);
    }
  }

  /** CPU time of this JVM so far. */
  static long jvmNow() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime();
    }
    return -1;
  }

  /**
   * The postmaster of the server behind {@code db}, when it runs on this machine: the parent of the backend that
   * answers {@code pg_backend_pid()}.
   */
  static OptionalLong postmaster(DataSource db) {
    if (db == null) {
      return OptionalLong.empty();
    }
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      long backend = rs.getLong(1);
      Path status = Path.of("/proc", Long.toString(backend), "status");
      if (!Files.isReadable(status)) {
        return OptionalLong.empty();
      }
      // the pid is the server's: on a server in another pid namespace (a container) it may name another process
      if (!isPostgres(backend)) {
        return OptionalLong.empty();
      }
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("PPid:")) {
          long parent = Long.parseLong(line.substring(5).trim());
          return isPostgres(parent) ? OptionalLong.of(parent) : OptionalLong.empty();
        }
      }
    } catch (Exception e) {
      // an external server, or no /proc: no PostgreSQL figure
    }
    return OptionalLong.empty();
  }

  /** Whether process {@code pid} of this machine runs PostgreSQL's {@code postgres} program. */
  private static boolean isPostgres(long pid) {
    try {
      Path exe = Path.of("/proc", Long.toString(pid), "exe");
      String program = Files.isReadable(exe) ? Files.readSymbolicLink(exe).getFileName().toString()
          : Files.readString(Path.of("/proc", Long.toString(pid), "comm")).strip();
      return program.startsWith("postgres");
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * CPU time of process {@code root} and its children so far: the root's own and its reaped children's time, plus
   * the time of the children alive now (a PostgreSQL backend is a child of the postmaster); -1 when unreadable.
   */
  static long treeNow(long root) {
    long ticks = 0;
    try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString()
        .chars().allMatch(Character::isDigit))) {
      for (Path p : procs) {
        long[] stat = stat(p.resolve("stat"));
        if (stat == null) {
          continue; // ended meanwhile
        }
        long pid = Long.parseLong(p.getFileName().toString());
        if (pid == root) {
          ticks += stat[1] + stat[2] + stat[3] + stat[4];
        } else if (stat[0] == root) {
          ticks += stat[1] + stat[2];
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return ticks * NANOS_PER_TICK;
  }

  /** ppid, utime, stime, cutime, cstime of a {@code /proc/PID/stat}; null when it is gone. */
  static long[] stat(Path file) {
    String line;
    try {
      line = Files.readString(file);
    } catch (IOException e) {
      return null;
    }
    return parseStat(line);
  }

  /** ppid, utime, stime, cutime, cstime of a {@code /proc/PID/stat} line (the command may hold spaces and ')'). */
  static long[] parseStat(String line) {
    String[] f = line.substring(line.lastIndexOf(')') + 2).trim().split(" ");
    // after the command: state(0) ppid(1) pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(11)
    // stime(12) cutime(13) cstime(14)
    return new long[]{Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
        Long.parseLong(f[14])};
  }
}
