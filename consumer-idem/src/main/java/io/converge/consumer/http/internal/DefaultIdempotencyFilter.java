package io.converge.consumer.http.internal;

import io.converge.consumer.CommitOutcome;
import io.converge.consumer.Unavailability;
import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyFilter;
import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencyProblem;
import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import io.converge.consumer.http.TenantResolver;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link IdempotencyFilter}: claim, run, store, in three steps with no transaction across the handler. */
public final class DefaultIdempotencyFilter implements IdempotencyFilter {

  private static final Logger log = LoggerFactory.getLogger(DefaultIdempotencyFilter.class);
  /** Where Spring MVC and the servlet error mechanism keep an exception that was rendered as a response. */
  private static final List<String> RENDERED_EXCEPTION_ATTRIBUTES = List
      .of("org.springframework.web.servlet.DispatcherServlet.EXCEPTION", "jakarta.servlet.error.exception");
  /** The header that marks a replayed response. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  private final TenantResolver tenants;
  private final EndpointRules rules;
  private final IdempotencySettings settings;
  private final IdempotencyMetrics metrics;
  private final KeyStore store;
  /** The store's data source: the handler's transactions on it carry the claim's work-committed marker. */
  private final DataSource dataSource;
  /** Renews the leases of running handlers on a connection of its own. */
  private final LeaseKeeper leases;

  /**
   * Built by {@code IdempotencyFilter.builder()}; arguments are validated there. {@code leaseDataSource}
   * gives the lease keeper its one connection, held for the filter's life.
   */
  public DefaultIdempotencyFilter(DataSource dataSource, DataSource leaseDataSource, TenantResolver tenants,
      Supplier<? extends Collection<IdempotentEndpoint>> endpoints, IdempotencySettings settings,
      IdempotencyMetrics metrics) {
    this.tenants = tenants;
    this.rules = new EndpointRules(endpoints, settings);
    this.settings = settings;
    this.metrics = SpanOutcomes.wrap(metrics); // the outcome on the server span too
    this.store = new KeyStore(dataSource, settings.ttl(), settings.lease());
    this.dataSource = dataSource;
    this.leases = new LeaseKeeper(leaseDataSource, settings.lease());
  }

  /**
   * Compiles an endpoint's path pattern as the filter will, so that a pattern it cannot read is refused where the
   * endpoint is made (at the application's start) rather than at its first request.
   *
   * @throws IllegalArgumentException naming the pattern and what is wrong with it
   */
  public static void checkPathPattern(String pattern) {
    PathPattern.compile(pattern);
  }

  /** Stops the lease renewals and gives their connection back. */
  @Override
  public void destroy() {
    leases.close();
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    // every spelling the container or Spring MVC routes to a protected endpoint is protected (issue 13.7)
    String path = RequestPaths.routed(request);
    Rule rule = rules.match(request.getMethod(), RequestPaths.views(request));
    if (rule == null) {
      chain.doFilter(req, res);
      return;
    }
    String endpoint = rule.endpoint().toString();
    String key = null;
    String tenant = null;
    KeyStore.Decision decision;
    RequestReader.Read read;
    try {
      key = Keys.key(request, settings.keyHeader());
      SpanOutcomes.key(key);
      if (key == null && !rule.endpoint().required()) {
        chain.doFilter(req, res);
        return;
      }
      Keys.requirePresent(key, settings.keyHeader());
      tenant = Keys.tenant(tenants.resolve(request));
      read = RequestReader.read(request, path, rule.canonicalizer(), settings.maxBodyBytes());
      // the keeper holds its connection before the first claim exists: a pool exhausted right after the claim
      // cannot leave the claim's lease without renewals
      leases.reserve();
      decision = store.claim(new KeyStore.Request(tenant, key, read.fingerprint(), request.getMethod(), path,
          rule.endpoint().expectedDuration()));
    } catch (IdempotencyException e) {
      refuse(response, endpoint, e, tenant, key);
      return;
    }
    if (decision instanceof KeyStore.Replay replay) {
      metrics.hit(endpoint);
      log.debug("Replaying the response of Idempotency-Key '{}' of tenant '{}' on {}", key, tenant, endpoint);
      write(response, replay.response(), true);
    } else if (decision instanceof KeyStore.AnswerLost lost) {
      metrics.rejected(endpoint, IdempotencyProblem.ANSWER_LOST);
      log.error("Idempotency-Key '{}' of tenant '{}' on {}: its first request's work committed but its answer was "
          + "lost (never stored); the handler is not run again, 409 {} is stored as the key's answer", key, tenant,
          endpoint, IdempotencyProblem.ANSWER_LOST.code());
      write(response, lost.response(), false);
    } else if (decision instanceof KeyStore.Busy busy) {
      metrics.inProgress(endpoint);
      long seconds = Math.max(1, (busy.retryAfter().toMillis() + 999) / 1000);
      response.setHeader("Retry-After", Long.toString(seconds));
      Problems.write(response, IdempotencyProblem.IN_PROGRESS,
          "Idempotency-Key '" + key + "' is being processed; retry in "
              + seconds + " s");
    } else if (decision instanceof KeyStore.Mismatch) {
      metrics.conflict(endpoint);
      log.warn("Idempotency-Key '{}' of tenant '{}' reused with a different request on {}", key, tenant, endpoint);
      Problems.write(response, IdempotencyProblem.KEY_REUSED, "Idempotency-Key '" + key
          + "' was first used with a different method, path or body");
    } else if (decision instanceof KeyStore.Claimed claimed) {
      metrics.claimed(endpoint);
      if (claimed.takenOver()) {
        metrics.takenOver(endpoint);
        log.warn("Idempotency-Key '{}' of tenant '{}' taken over after its lease: no commit marker", key, tenant);
      }
      run(read.request(), response, chain, endpoint, tenant, key, claimed);
    }
  }

  private void run(HttpServletRequest request, HttpServletResponse response, FilterChain chain, String endpoint,
      String tenant, String key, KeyStore.Claimed claimed) throws IOException, ServletException {
    CapturingResponse capture = new CapturingResponse(response, settings.maxResponseBytes());
    request.setAttribute(IdempotencyFilter.KEY_ATTRIBUTE, key);
    // while the handler runs its lease is renewed: only a dead process loses its claim, never a slow one
    leases.keep(new LeaseKeeper.Claim(tenant, key, claimed.owner()));
    Throwable failure = null;
    boolean commitOutcomeUnknown;
    boolean committed;
    boolean unknownOutcomeMarked;
    boolean connectionLostAtCommit;
    try {
      try (CommitOutcome.Watch commits = CommitOutcome
          .watch(new ClaimMarker(dataSource, tenant, key, claimed.owner()))) {
        try {
          chain.doFilter(request, capture);
        } catch (IOException | ServletException | RuntimeException e) {
          failure = e;
        }
        capture.flushWriter(); // the writer's last bytes may take the body over the limit: decide on all of it
        commitOutcomeUnknown = commits.sawUnknownOutcome();
        committed = commits.sawCommit();
        unknownOutcomeMarked = commits.unknownOutcomeMarked();
        connectionLostAtCommit = commits.sawConnectionLostAtCommit();
      }
      // an outage the application rendered itself (Spring MVC keeps the exception in a request attribute)
      Throwable cause = failure != null ? failure : renderedFailure(request, capture);
      // work that committed (or may have) is never released: the retry would do it twice
      if (cause != null && !commitOutcomeUnknown && !committed && Unavailability.isUnavailability(cause)) {
        leases.stop(claimed.owner()); // nothing committed: the key may lapse
        releaseUnavailable(capture, endpoint, tenant, key, claimed, cause);
        abortIfStreamed(capture, failure);
        return;
      }
      // neither stored nor released when the claim's marker will tell (a connection lost at a marked commit, seen
      // by the watch or in the failure: a handler may fail on something else after it); else stored: a commit without
      // the marker, or one the database refused (rolled back), never runs twice
      if (cause != null && unknownOutcomeMarked && (connectionLostAtCommit
          || (commitOutcomeUnknown || Unavailability.isCommitOutcomeUnknown(cause))
              && Unavailability.isConnectionLost(cause))) {
        outcomeUnknown(capture, endpoint, tenant, key, claimed, cause);
        abortIfStreamed(capture, failure);
        return;
      }
      if (cause != null && committed && Unavailability.isUnavailability(cause)) {
        log.warn("The handler of Idempotency-Key '{}' of tenant '{}' failed on an unavailability after it committed "
            + "work: its answer is stored, the key is not released for a retry", key, tenant);
      }
      if (failure != null) {
        log.error("The handler of Idempotency-Key '{}' of tenant '{}' failed; its 500 answer is stored and replayed",
            key, tenant, failure);
        capture.replaceWith(500, Problems.body(IdempotencyProblem.HANDLER_FAILED, null));
      }
      StoredResponse stored;
      if (!capture.streamed()) {
        stored = capture.toStored(settings.replayedHeaders());
      } else if (failure != null) {
        stored = Problems.stored(IdempotencyProblem.HANDLER_FAILED); // its client's response was cut (below)
      } else {
        metrics.rejected(endpoint, IdempotencyProblem.ANSWER_NOT_STORED);
        log.warn("The response of Idempotency-Key '{}' of tenant '{}' on {} is over max-response-size ({} bytes): "
            + "sent, not stored; retries get 409 {}", key, tenant, endpoint, settings.maxResponseBytes(),
            IdempotencyProblem.ANSWER_NOT_STORED.code());
        stored = Problems.stored(IdempotencyProblem.ANSWER_NOT_STORED);
      }
      try {
        // while the database restarts: the lease is still kept, so no retry can take the key over meanwhile
        if (!store.complete(tenant, key, claimed.owner(), stored, settings.lease().dividedBy(2))) {
          log.warn("Idempotency-Key '{}' of tenant '{}' was taken over while its handler ran (longer than the lease "
              + "{}); this response is not stored", key, tenant, settings.lease());
        }
      } catch (IdempotencyException e) {
        log.error("The response of Idempotency-Key '{}' of tenant '{}' could not be stored; a retry after the lease "
            + "({}) runs the handler again unless its work committed (then it gets 409 {})", key, tenant,
            settings.lease(), IdempotencyProblem.ANSWER_LOST.code(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        log.error("Interrupted storing the response of Idempotency-Key '{}' of tenant '{}'", key, tenant);
      }
      leases.stop(claimed.owner());
      capture.release(stored.body());
      abortIfStreamed(capture, failure);
    } finally {
      // renewed until the answer is stored (or the handler's failure is being released): a retry cannot take the key
      // over while a committed answer is not stored yet
      leases.stop(claimed.owner());
    }
  }

  /**
   * A handler that failed after its response started streaming to the client (over max-response-size): the response
   * cannot be replaced any more, so the failure goes to the container, which cuts the connection instead of ending a
   * truncated body as if it were whole.
   */
  private static void abortIfStreamed(CapturingResponse capture, Throwable failure)
      throws IOException, ServletException {
    if (!capture.streamed() || failure == null) {
      return;
    }
    if (failure instanceof IOException e) {
      throw e;
    }
    if (failure instanceof ServletException e) {
      throw e;
    }
    throw (RuntimeException) failure;
  }

  /** Spring MVC's record of an exception an exception handler turned into a 5xx response; null when none. */
  private static Throwable renderedFailure(HttpServletRequest request, CapturingResponse capture) {
    if (capture.getStatus() < 500) {
      return null;
    }
    for (String attribute : RENDERED_EXCEPTION_ATTRIBUTES) {
      if (request.getAttribute(attribute) instanceof Throwable t) {
        return t;
      }
    }
    return null;
  }

  /** Unknown commit: the claim lapses with its lease, then a retry reads its marker (answer-lost, or a new run). */
  private void outcomeUnknown(CapturingResponse capture, String endpoint, String tenant, String key,
      KeyStore.Claimed claimed, Throwable cause) throws IOException {
    metrics.rejected(endpoint, IdempotencyProblem.OUTCOME_UNKNOWN);
    leases.stop(claimed.owner());
    log.warn("The handler of Idempotency-Key '{}' of tenant '{}' failed with a commit whose outcome is unknown: 503 "
        + "answered, not stored; the key is kept until its lease ({}) is over: {}", key, tenant, settings.lease(),
        cause.toString());
    byte[] body = Problems.body(IdempotencyProblem.OUTCOME_UNKNOWN, null);
    capture.replaceWith(IdempotencyProblem.OUTCOME_UNKNOWN.status(), body);
    capture.setHeader("Retry-After", Long.toString(Math.max(1, (settings.lease().toMillis() + 999) / 1000)));
    capture.release(body);
  }

  /**
   * The handler's work was rolled back because something was unavailable: the key is given back and the
   * client told to retry (503), instead of storing an outage as the request's answer for the TTL.
   */
  private void releaseUnavailable(CapturingResponse capture, String endpoint, String tenant, String key,
      KeyStore.Claimed claimed, Throwable cause) throws IOException {
    long retryAfter = 1;
    try {
      if (!store.release(tenant, key, claimed.owner())) {
        // its marker is set (a commit the watch did not see) or another request holds it: either way the claim
        // decides after its lease, answer-lost or a new run
        log.debug("Idempotency-Key '{}' of tenant '{}' was not released: its work committed or it was taken over",
            key, tenant);
        outcomeUnknown(capture, endpoint, tenant, key, claimed, cause);
        return;
      }
    } catch (java.sql.SQLException | RuntimeException e) {
      // the claim stays until its lease is over; then a retry takes it over
      retryAfter = Math.max(1, settings.lease().toSeconds());
      log.error("Idempotency-Key '{}' of tenant '{}' could not be released; a retry runs after its lease ({})", key,
          tenant, settings.lease(), e);
    }
    metrics.rejected(endpoint, IdempotencyProblem.HANDLER_UNAVAILABLE);
    log.warn("The handler of Idempotency-Key '{}' of tenant '{}' failed on an unavailability; key released, 503 "
        + "answered, not stored: {}", key, tenant, cause.toString());
    byte[] body = Problems.body(IdempotencyProblem.HANDLER_UNAVAILABLE, null);
    capture.replaceWith(IdempotencyProblem.HANDLER_UNAVAILABLE.status(), body);
    capture.setHeader("Retry-After", Long.toString(retryAfter));
    capture.release(body);
  }

  private void write(HttpServletResponse response, StoredResponse stored, boolean replayed) throws IOException {
    response.setStatus(stored.status());
    stored.headers().forEach(response::setHeader);
    if (replayed) {
      response.setHeader(REPLAYED_HEADER, "true");
    }
    response.setContentLength(stored.body().length);
    response.getOutputStream().write(stored.body());
  }

  private void refuse(HttpServletResponse response, String endpoint, IdempotencyException e, String tenant, String key)
      throws IOException {
    metrics.rejected(endpoint, e.problem());
    boolean clientError = e.problem().status() < 500;
    if (clientError) {
      log.info("Refused {} on {} (tenant {}, key {}): {}", e.problem().code(), endpoint, tenant, key, e.getMessage());
    } else {
      log.error("Refused {} on {} (tenant {}, key {})", e.problem().code(), endpoint, tenant, key, e);
      response.setHeader("Retry-After", "1");
    }
    // a server-side failure's text stays in the log: the client gets the title only
    Problems.write(response, e.problem(), clientError ? e.getMessage() : null);
  }
}
