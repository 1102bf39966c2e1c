package io.converge.ops.chaos;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A PostgreSQL crash restart: one backend killed with -9, upon which the postmaster ends every session, replays its
 * WAL and accepts connections again.
 */
final class PostgresCrash {

  private PostgresCrash() {
  }

  /**
   * Kills with -9 the backend of a session opened for the purpose (a crash needs no client of the services to be
   * connected: right after a database blackout they may have none), waits until a second session opened before is
   * ended (the crash restart began) and PostgreSQL accepts connections again, at most {@code backTimeout}; returns the
   * killed backend's pid.
   */
  static long crash(DataSource db, Duration backTimeout) throws Exception {
    long deadline = System.nanoTime() + backTimeout.toNanos();
    try (Connection victim = db.getConnection(); Connection witness = db.getConnection()) {
      long pid = pid(victim);
      pid(witness);
      ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("no process " + pid)).destroyForcibly();
      while (alive(witness)) {
        await(deadline, backTimeout, "PostgreSQL did not end its sessions", null);
      }
      while (true) {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
          s.execute("SELECT 1");
          return pid;
        } catch (SQLException e) {
          await(deadline, backTimeout, "PostgreSQL not back", e);
        }
      }
    } catch (SQLException e) { // closing the dead sessions
      throw new IllegalStateException("PostgreSQL crash restart: " + e, e);
    }
  }

  private static long pid(Connection c) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static boolean alive(Connection c) {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT 1");
      return true;
    } catch (SQLException e) {
      return false;
    }
  }

  private static void await(long deadline, Duration bound, String what, SQLException last) throws InterruptedException {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException(what + " " + bound.toSeconds() + " s after the crash", last);
    }
    Thread.sleep(200); // the poll interval of a wait with a deadline
  }
}
