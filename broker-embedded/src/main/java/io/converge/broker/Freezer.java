package io.converge.broker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Freezes a server process and its descendants with {@code SIGSTOP} and thaws them with
 * {@code SIGCONT} (through the {@code kill} command: the JDK cannot send these signals), to test an
 * outage in which the server neither answers nor closes its connections, as a stalled host or a long
 * GC pause does. Linux and macOS only. Thread-safe.
 */
public final class Freezer {

  private static final Logger LOG = LoggerFactory.getLogger(Freezer.class);

  private final String server;
  private final Set<Long> frozen = new LinkedHashSet<>();

  /** A freezer for the processes of {@code server} (its name, for messages). */
  public Freezer(String server) {
    this.server = server;
  }

  /**
   * Stops {@code root} first (so it forks no new child), then every descendant it has at that moment.
   * Idempotent while frozen.
   *
   * @throws EmbeddedServerException naming the server and pid when a signal cannot be sent
   */
  public synchronized void freeze(long root) {
    if (!frozen.isEmpty()) {
      return;
    }
    signal("STOP", List.of(root));
    frozen.add(root);
    List<Long> children = new ArrayList<>();
    ProcessHandle.of(root).ifPresent(p -> p.descendants().forEach(d -> children.add(d.pid())));
    if (!children.isEmpty()) {
      signal("STOP", children);
      frozen.addAll(children);
    }
    LOG.warn("{} frozen (SIGSTOP of pid {} and {} descendant(s))", server, root, children.size());
  }

  /** Continues every process {@link #freeze(long)} stopped. Idempotent. */
  public synchronized void thaw() {
    if (frozen.isEmpty()) {
      return;
    }
    List<Long> alive = frozen.stream().filter(pid -> ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
        .toList();
    frozen.clear();
    if (!alive.isEmpty()) {
      signal("CONT", alive, true);
    }
    LOG.warn("{} thawed (SIGCONT of {} process(es))", server, alive.size());
  }

  /** Whether the processes are frozen now. */
  public synchronized boolean isFrozen() {
    return !frozen.isEmpty();
  }

  private void signal(String signal, List<Long> pids) {
    signal(signal, pids, false);
  }

  /** With {@code tolerateGone}, a process that exited meanwhile (a closing backend) is no failure. */
  private void signal(String signal, List<Long> pids, boolean tolerateGone) {
    List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
    pids.forEach(pid -> command.add(Long.toString(pid)));
    try {
      Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
        throw new EmbeddedServerException(
            "kill -" + signal + " of " + server + " pids " + pids + " did not return within 10 s");
      }
      String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      boolean onlyGone = out.lines().allMatch(l -> l.contains("No such process"));
      if (kill.exitValue() != 0 && !(tolerateGone && onlyGone)) {
        throw new EmbeddedServerException("kill -" + signal + " of " + server + " pids " + pids + " failed (exit "
            + kill.exitValue() + "): " + out);
      }
    } catch (IOException e) {
      throw new EmbeddedServerException("Cannot run kill -" + signal + " for " + server + " pids " + pids, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EmbeddedServerException("Interrupted while sending SIG" + signal + " to " + server, e);
    }
  }
}
