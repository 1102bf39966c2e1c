package io.converge.outbox.cdc;

import io.converge.outbox.internal.DeliveryPolicy;
import io.converge.core.internal.Backoff;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of a CDC relay's Debezium engine and of its supervisor. The engine runs on a daemon
 * thread of the relay's own thread group (Debezium's pools are created from it, so they are in that
 * group too); the supervisor (one daemon thread, {@link #start}) restarts a failed engine after the
 * shared {@link Backoff} (the relay's outage backoff, by failures in a row; a delivered batch resets the
 * count) and runs the relay's periodic tasks. Thread-safe.
 */
final class CdcEngine {

  private static final Logger LOG = LoggerFactory.getLogger(CdcEngine.class);

  private final CdcSettings settings;
  private final String slot;
  private final DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> consumer;
  private final Backoff restartBackoff;
  private final ThreadGroup threads;
  /** Guards {@link #engine} against {@link #close} racing a restart: closing is set before it is read. */
  private final Object engineLock = new Object();
  private final AtomicLong restarts = new AtomicLong();
  private final AtomicInteger failuresInARow = new AtomicInteger();
  private volatile String lastFailure;
  private volatile boolean running;
  private volatile boolean closing;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private volatile Thread engineThread;
  private volatile ScheduledExecutorService supervisor;

  /** An engine on slot {@code slot} whose batches go to {@code consumer}; not started. */
  CdcEngine(CdcSettings settings, String slot,
      DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> consumer) {
    this.settings = settings;
    this.slot = slot;
    this.consumer = consumer;
    this.restartBackoff = DeliveryPolicy.jittered(settings.delivery().brokerBackoffBase(),
        settings.delivery().brokerBackoffMax());
    this.threads = new ThreadGroup("converge-cdc-" + settings.name());
  }

  /** Starts the supervisor and the engine; returns the supervisor, for the relay's periodic tasks. */
  synchronized ScheduledExecutorService start() {
    closing = false;
    supervisor = Executors
        .newSingleThreadScheduledExecutor(r -> daemon(r, "converge-cdc-" + settings.name() + "-supervisor"));
    launch();
    return supervisor;
  }

  /** A daemon thread of the relay's group, not started. */
  Thread daemon(Runnable r, String name) {
    Thread t = new Thread(threads, r, name);
    t.setDaemon(true);
    return t;
  }

  /** Builds and runs a new engine on its own thread (Debezium's pools are created from it: same group). */
  private synchronized void launch() {
    if (closing) {
      return;
    }
    Thread t = daemon(() -> {
      DebeziumEngine<RecordChangeEvent<SourceRecord>> e = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
          .using(DebeziumProperties.of(settings, slot))
          .notifying(this::handleBatch)
          .using((success, message, error) -> stopped(message, error))
          .build();
      synchronized (engineLock) {
        if (closing) {
          return;
        }
        engine = e;
      }
      running = true;
      e.run();
    }, "converge-cdc-" + settings.name());
    engineThread = t;
    t.start();
  }

  private void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    consumer.handleBatch(records, committer);
    failuresInARow.set(0);
  }

  /** The engine's completion callback: unless closing, it failed: restart it after a backoff. */
  private void stopped(String message, Throwable error) {
    running = false;
    if (closing) {
      return;
    }
    long delay = restartBackoff.delay(failuresInARow.incrementAndGet()).toMillis();
    restarts.incrementAndGet();
    lastFailure = message + (error == null ? "" : ": " + error);
    settings.metrics().cdcRestarted();
    LOG.error("CDC relay {}: engine stopped ({}); restart {} in {} ms", settings.name(), lastFailure, restarts.get(),
        delay, error);
    ScheduledExecutorService s = supervisor;
    if (s != null && !s.isShutdown()) {
      s.schedule(this::launch, delay, TimeUnit.MILLISECONDS);
    }
  }

  /** Whether {@link #close} was called (and no start since). */
  boolean closing() {
    return closing;
  }

  /** The engine runs (started, not failed, not closed). */
  boolean running() {
    return running;
  }

  /** Engine failures restarted since start. */
  long restarts() {
    return restarts.get();
  }

  /** The last engine failure, or null. */
  String lastFailure() {
    return lastFailure;
  }

  /** Stops the supervisor and the engine, waiting up to 30 s for the engine's thread. */
  synchronized void close() {
    closing = true;
    ScheduledExecutorService s = supervisor;
    if (s != null) {
      s.shutdownNow();
    }
    DebeziumEngine<RecordChangeEvent<SourceRecord>> e;
    synchronized (engineLock) {
      e = engine;
      engine = null;
    }
    if (e != null) {
      try {
        e.close();
      } catch (Exception ex) {
        LOG.warn("CDC relay {}: closing the engine: {}", settings.name(), ex.toString());
      }
    }
    Thread t = engineThread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
      }
    }
    engineThread = null;
    supervisor = null;
    running = false;
  }

  /**
   * When {@code main} has returned (the launcher's DestroyJavaVM thread waits) and only this relay's
   * threads are left (Debezium's pools are not daemon threads), runs {@code closer} on a thread of its
   * own so the JVM can exit.
   */
  void closeWhenOnlyOursAreLeft(Runnable closer) {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] all = new Thread[root.activeCount() + 16];
    int n = root.enumerate(all, true);
    boolean mainReturned = false;
    for (int i = 0; i < n; i++) {
      Thread t = all[i];
      if ("DestroyJavaVM".equals(t.getName())) {
        mainReturned = true;
      } else if (t.isAlive() && !t.isDaemon() && !inOurGroup(t)) {
        return;
      }
    }
    if (mainReturned) {
      LOG.info("CDC relay {}: the application's main thread has ended and the relay was not closed: closing it",
          settings.name());
      daemon(closer, "converge-cdc-" + settings.name() + "-close").start();
    }
  }

  private boolean inOurGroup(Thread t) {
    for (ThreadGroup g = t.getThreadGroup(); g != null; g = g.getParent()) {
      if (g == threads) {
        return true;
      }
    }
    return false;
  }
}
