package io.converge.examples.demo;

import io.converge.broker.DevPlatform;
import java.io.PrintStream;
import java.time.Duration;

/**
 * The outages of one phase, played in a background thread while the traffic runs: after
 * {@link Outages#DELAY}, PostgreSQL frozen then thawed, then the broker down then up. Whatever
 * happens, {@link #close()} leaves the database thawed and the broker up. Not reusable.
 */
final class OutageRun implements Disturbance {

  /** What the demo can do to its servers in one phase. */
  interface Servers {

    void freezeDb();

    void thawDb();

    /** Stops (RocketMQ) or freezes (Pulsar) the phase's broker; returns what it did, for the log. */
    String brokerDown();

    void brokerUp();

    /** What the outages of a {@code backend} phase act on: PostgreSQL, and the phase's broker. */
    static Servers of(DevPlatform platform, Backend backend) {
      return new Servers() {

        @Override
        public void freezeDb() {
          platform.postgres().freeze();
        }

        @Override
        public void thawDb() {
          platform.postgres().thaw();
        }

        @Override
        public String brokerDown() {
          if (backend.onPulsar()) {
            platform.pulsar().freeze();
            return "Pulsar frozen (SIGSTOP of its JVM)";
          }
          platform.rocketmq().stopBroker();
          return "RocketMQ broker stopped";
        }

        @Override
        public void brokerUp() {
          if (backend.onPulsar()) {
            platform.pulsar().thaw();
          } else if (!platform.rocketmq().isBrokerRunning()) {
            platform.rocketmq().startBroker();
          }
        }
      };
    }
  }

  private final Outages outages;
  private final Servers servers;
  private final PrintStream out;
  private final Cancellation cancel = new Cancellation();
  private Thread thread;
  private volatile RuntimeException failure;
  private long started;

  OutageRun(Outages outages, Servers servers, PrintStream out) {
    this.outages = outages;
    this.servers = servers;
    this.out = out;
  }

  /** Starts the outages in the background; nothing when there are none. */
  @Override
  public void begin() {
    if (!outages.any()) {
      return;
    }
    started = System.nanoTime();
    thread = new Thread(this::play, "demo-outages");
    thread.setDaemon(true);
    thread.start();
  }

  /** Waits for the outages to end (at most their length plus {@code slack}). */
  @Override
  public void awaitEnd(Duration slack) throws InterruptedException {
    if (thread == null) {
      return;
    }
    Duration bound = Outages.DELAY.plus(outages.freezeDb()).plus(outages.stopBroker()).plus(slack);
    thread.join(bound.toMillis());
    if (thread.isAlive()) {
      throw new IllegalStateException("the outages did not end within " + bound);
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void play() {
    try {
      if (cancel.pause(Outages.DELAY)) {
        return;
      }
      if (!outages.freezeDb().isZero()) {
        servers.freezeDb();
        log("PostgreSQL frozen (SIGSTOP) for " + outages.freezeDb().toSeconds() + " s");
        try {
          if (cancel.pause(outages.freezeDb())) {
            return;
          }
        } finally {
          servers.thawDb();
          log("PostgreSQL thawed");
        }
      }
      if (!outages.stopBroker().isZero()) {
        log("taking the broker away");
        String what = servers.brokerDown();
        log(what + " for " + outages.stopBroker().toSeconds() + " s");
        try {
          cancel.pause(outages.stopBroker());
        } finally {
          servers.brokerUp();
          log("broker back");
        }
      }
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  private void log(String what) {
    out.printf("  [outage] +%d s: %s%n", (System.nanoTime() - started) / 1_000_000_000, what);
  }

  /** Cancels what is still to come and waits until the database is thawed and the broker up. */
  @Override
  public void close() throws InterruptedException {
    cancel.cancel();
    if (thread != null) {
      thread.join(Duration.ofMinutes(2).toMillis());
    }
  }
}
