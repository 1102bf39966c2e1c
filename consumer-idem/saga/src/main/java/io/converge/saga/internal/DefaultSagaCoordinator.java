package io.converge.saga.internal;

import io.converge.core.internal.Text;
import io.converge.consumer.IdempotentHandler;
import io.converge.consumer.IncomingMessage;
import io.converge.core.BrokerUnavailableException;
import io.converge.core.DatabaseUnavailableException;
import io.converge.core.Envelope;
import io.converge.core.internal.DatabaseErrors;
import io.converge.producer.TxnContext;
import io.converge.saga.SagaCoordinator;
import io.converge.saga.SagaCoordinatorBuilder;
import io.converge.saga.SagaDefinition;
import io.converge.saga.SagaStep;
import io.converge.saga.SagaException;
import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import io.converge.saga.SagaHeaders;
import java.util.HashMap;
import java.util.Map;
import java.net.http.HttpClient;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The coordinator: starts, replies and the recovery poll. Thread-safe. */
public final class DefaultSagaCoordinator implements SagaCoordinator {

  private static final Logger log = LoggerFactory.getLogger(DefaultSagaCoordinator.class);

  private final SagaCoordinatorBuilder.Settings settings;
  private final Transitions moves;
  private final Driver driver;
  private final IdempotentHandler replies;
  private final HttpBranches http;
  private final SagaSpans spans;
  /** Free HTTP threads: a poll claims a saga only with one in hand (see {@link #poll}). */
  private final Semaphore slots;
  private ScheduledExecutorService poller;
  private ExecutorService httpCalls;

  /** A coordinator of {@code settings} (validated by the builder). */
  public DefaultSagaCoordinator(SagaCoordinatorBuilder.Settings settings) {
    this(settings, Tracing.global());
  }

  /** Use {@link SagaCoordinator#builder()}; {@code tracing}: the reply handler's, a reply's span a child of it. */
  public DefaultSagaCoordinator(SagaCoordinatorBuilder.Settings settings, Tracing tracing) {
    this.settings = settings;
    this.spans = new SagaSpans(tracing);
    this.moves = new Transitions(settings.replyTopic(), settings.clock(), settings.metrics(),
        new RateLimits(settings.compensationRate(), settings.participantRates(), settings.nanoTime()),
        settings.participantRetention(), spans);
    this.driver = new Driver(settings.definitions(), moves, settings.metrics(), spans);
    this.replies = IdempotentHandler.builder().group(settings.replyGroup())
        .transactions(new ProducerTransactions(settings.producer())).policy(settings.replyPolicy())
        .clock(settings.clock()).tracing(tracing).traceAsParent(true)
        .handler((c, m) -> driver.onReply(ProducerTransactions.current(), m)).build();
    this.slots = new Semaphore(settings.httpConcurrency());
    this.http = new HttpBranches(settings.httpClient() != null ? settings.httpClient()
        : HttpClient.newBuilder().connectTimeout(settings.httpConnectTimeout()).build());
  }

  @Override
  public <D> boolean start(SagaDefinition<D> definition, String sagaId, D data) {
    return settings.producer().inTransaction(tx -> start(tx, definition, sagaId, data));
  }

  @Override
  public <D> boolean start(TxnContext tx, SagaDefinition<D> definition, String sagaId, D data) {
    if (settings.definitions().get(definition.name()) != definition) { // a TCC's shape is registered as is
      throw new IllegalArgumentException("saga definition '" + definition.name()
          + "' is not registered with this coordinator (SagaCoordinatorBuilder.definitions or .tcc)");
    }
    if (sagaId == null || sagaId.isEmpty() || sagaId.length() > 128) {
      throw new IllegalArgumentException("saga.id must be 1-128 characters, but was " + sagaId);
    }
    Map<String, String> trace = new HashMap<>(2);
    try (MessageSpan span = spans.saga(definition.name(), sagaId, trace)) {
      Connection c = tx.connection();
      Instant now = moves.now();
      if (!SagaStore.insert(c, sagaId, Envelope.DEFAULT_TENANT, definition.name(), definition.codec().encode(data),
          now, now.plus(definition.deadline()), now, trace, now.plus(settings.participantRetention().sendHorizon()),
          guardedSteps(definition))) {
        log.debug("Saga {} exists already: not started again", sagaId);
        span.attribute("converge.saga.started", "false");
        return false;
      }
      SagaRow row = SagaStore.lock(c, sagaId).orElseThrow();
      moves.event(c, row, null, null, "STARTED", null, null);
      moves.forward(tx, definition, row, row, 0, data);
      settings.metrics().started(definition.name());
      return true;
    } catch (RuntimeException e) {
      throw e;
    } catch (SQLException e) {
      throw DatabaseErrors.translate("Saga " + sagaId + " could not start", null, e); // an outage stays an outage
    } catch (Exception e) {
      throw new SagaException("Saga " + sagaId + " could not start: " + e, sagaId, e);
    }
  }

  /**
   * The indexes of the steps of {@code definition} whose commands the coordinator's send guard bounds by the
   * participants' retention ({@link SagaStep#boundByRetention}, {@code Transitions.pastParticipantRetention}). Stored
   * with the saga with its send horizon, so that an operator's action ({@code SagaOps}) refuses what the guard would.
   */
  private static <D> Integer[] guardedSteps(SagaDefinition<D> definition) {
    List<Integer> guarded = new ArrayList<>();
    for (int i = 0; i < definition.steps().size(); i++) {
      if (definition.step(i).boundByRetention()) {
        guarded.add(i);
      }
    }
    return guarded.toArray(Integer[]::new);
  }

  @Override
  public IdempotentHandler replyHandler() {
    return replies;
  }

  @Override
  public int poll() {
    int driven = 0;
    List<Future<?>> calls = new ArrayList<>();
    try {
      while (driven < settings.batchSize()) {
        // a saga is claimed only when a call it may lead to can start at once: its intent's timeout (the saga's
        // due time) runs from the commit just before, as the call's own does; a queued call would pass it waiting,
        // and another instance would ask again
        try {
          slots.acquire();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
        int held = 1;
        try {
          AtomicReference<SagaRow> claimed = new AtomicReference<>();
          List<HttpBranches.Call> made = HttpBranches.list();
          boolean more;
          try {
            more = Boolean.TRUE.equals(HttpBranches.collect(made, () -> settings.producer().inTransaction(tx -> {
              Optional<SagaRow> due = SagaStore.claimDue(tx.connection(), moves.now());
              if (due.isEmpty()) {
                return false;
              }
              claimed.set(due.get());
              driver.due(tx, due.get());
              return true;
            })));
          } catch (DatabaseUnavailableException | BrokerUnavailableException e) {
            made.clear(); // rolled back, or of unknown outcome: the intents' timeouts ask again
            throw e; // an outage (a commit of unknown outcome too): every saga waits for it alike, the next poll tries
          } catch (RuntimeException e) {
            made.clear(); // rolled back: nothing to call
            if (claimed.get() == null) {
              throw e;
            }
            // this saga cannot be driven (a definition this instance does not know, data its codec cannot read, a
            // command the producer refuses): set it aside, or it would be claimed first again by every poll of every
            // instance and no other saga's timeout, deadline or compensation would ever run
            setAside(claimed.get(), e);
            more = true;
          } catch (Exception e) {
            made.clear();
            throw new SagaException("Saga poll failed: " + e, null, e);
          }
          for (HttpBranches.Call call : made) { // committed: the intent is recorded, the call may go
            if (held == 0) {
              slots.acquireUninterruptibly(); // one transition makes one call; never more than the slots in all
              held = 1;
            }
            calls.add(httpCalls().submit(() -> {
              try {
                callAndApply(call);
              } finally {
                slots.release();
              }
            }));
            held = 0; // the call's, released when its chain ends
          }
          if (!more) {
            break;
          }
          driven++;
        } finally {
          slots.release(held);
        }
      }
    } finally {
      awaitCalls(calls);
    }
    return driven;
  }

  /**
   * Makes an HTTP branch's call and applies its answer as a reply in a unit of work of its own; a call that answer
   * leads to (the next branch) is made the same way, on this thread. A failure to apply is logged: the saga's row
   * still awaits that answer, and its timeout asks again (the participant's barrier makes a second call safe).
   */
  private void callAndApply(HttpBranches.Call first) {
    java.util.ArrayDeque<HttpBranches.Call> todo = new java.util.ArrayDeque<>(List.of(first));
    while (!todo.isEmpty()) {
      HttpBranches.Call call = todo.poll();
      try {
        Map<String, String> headers = new HashMap<>(2);
        IncomingMessage answer;
        try (MessageSpan span = spans.call(call, headers)) {
          answer = http.call(call, headers);
          span.attribute("converge.saga.outcome", answer.header(SagaHeaders.OUTCOME));
        }
        List<HttpBranches.Call> next = HttpBranches.list();
        HttpBranches.collect(next, () -> settings.producer().inTransaction(tx -> {
          driver.onReply(tx, answer);
          return null;
        }));
        todo.addAll(next);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        log.warn("Saga {}: the answer of the {} of branch '{}' (attempt {}) could not be applied; its timeout asks"
            + " again", call.sagaId(), call.operation().wireName(), call.branch(), call.attempt(), e);
      }
    }
  }

  private static void awaitCalls(List<Future<?>> calls) {
    for (Future<?> f : calls) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (java.util.concurrent.ExecutionException e) {
        log.warn("An HTTP branch call failed", e.getCause());
      } catch (java.util.concurrent.CancellationException e) {
        log.debug("An HTTP branch call was cancelled (the coordinator closed); its timeout asks again");
      }
    }
  }

  private synchronized ExecutorService httpCalls() {
    if (httpCalls == null) {
      java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
      httpCalls = Executors.newFixedThreadPool(settings.httpConcurrency(), r -> {
        Thread t = new Thread(r, "converge-saga-http-" + settings.instanceId() + "-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
    }
    return httpCalls;
  }

  /**
   * Records why {@code row} could not be driven and makes it due again {@link #SET_ASIDE} later. The same error again
   * (the saga's {@code last_error}) writes no new event and logs at debug only: a saga that stays undrivable (its
   * definition is gone) must not grow the event table and the log every 30 s for ever; the metric counts each time.
   */
  private void setAside(SagaRow row, RuntimeException failure) {
    Instant now = moves.now();
    Instant next = now.plus(SET_ASIDE);
    String error = failure.toString();
    String reason = Text.abbreviate(error, MAX_ERROR); // a NUL in foreign text would make PostgreSQL refuse it
    boolean again = reason.equals(row.lastError());
    boolean recorded = Boolean.TRUE.equals(settings.producer().inTransaction(tx -> {
      if (!SagaStore.setAside(tx.connection(), row, next, reason, now)) {
        return false;
      }
      if (!again) {
        moves.event(tx.connection(), row, null, row.attempt(), "SET_ASIDE", null, reason);
      }
      return true;
    }));
    if (!recorded) {
      log.warn("Saga {} could not be driven ({}), and moved on meanwhile (another instance or an operator): not set"
          + " aside", row.id(), reason);
      return;
    }
    settings.metrics().setAside(row.definition());
    if (again) {
      log.debug("Saga {} still cannot be driven, set aside again until {}: {}", row.id(), next, reason);
    } else {
      log.error("Saga {} (definition {}, {} at step {}) could not be driven and is set aside until {} (and every {}"
          + " while the error stays the same, logged once); the other due sagas go on: {}", row.id(),
          row.definition(), row.state(), row.step(), next, SET_ASIDE, reason, failure);
    }
  }

  @Override
  public synchronized void startPolling() {
    if (poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "converge-saga-poll-" + settings.instanceId());
      t.setDaemon(true);
      return t;
    });
    long every = settings.pollInterval().toMillis();
    poller.scheduleWithFixedDelay(() -> {
      try {
        poll();
      } catch (RuntimeException e) {
        log.warn("Saga poll of {} failed; next poll in {} ms", settings.instanceId(), every, e);
      }
    }, 0, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
    if (httpCalls != null) {
      for (Runnable queued : httpCalls.shutdownNow()) {
        if (queued instanceof Future<?> f) {
          f.cancel(true); // a poll waiting for it returns; the saga's timeout asks again
        }
      }
      httpCalls = null;
    }
  }

  /** How long a saga that could not be driven waits before it is tried again. */
  static final Duration SET_ASIDE = Duration.ofSeconds(30);
  private static final int MAX_ERROR = 2000;

}
