package io.converge.saga.tcc.http;

import io.converge.consumer.BusinessException;
import io.converge.core.Envelope;
import io.converge.core.internal.DatabaseErrors;
import io.converge.core.internal.Json;
import io.converge.core.internal.Require;
import io.converge.core.internal.Text;
import io.converge.core.tracing.MessageSpan;
import io.converge.core.tracing.Tracing;
import io.converge.saga.tcc.CancelAfterConfirmException;
import io.converge.saga.tcc.ConfirmAfterCancelException;
import io.converge.saga.tcc.ConfirmWithoutTryException;
import io.converge.saga.tcc.TccBarrier;
import io.converge.saga.tcc.TccCall;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
import io.converge.saga.tcc.TccOutcome;
import io.converge.saga.tcc.TccResult;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The participant's side of TCC branches reached over HTTP (the source article's "three HTTP interfaces"): mount it
 * at the branch's Try, Confirm and Cancel URLs (one servlet serves all three: the operation is a header). Each POST
 * runs the barrier and the operation's work in one JDBC transaction on the servlet's data source, committed before
 * the answer is written.
 *
 * <p>The protocol (the coordinator's client side speaks exactly this): a POST with the headers
 * {@value TccHeaders#GLOBAL_ID}, {@value TccHeaders#BRANCH_ID}, {@value TccHeaders#OPERATION} ({@code try},
 * {@code confirm} or {@code cancel}) and {@value Envelope#TENANT} (absent or blank: {@code default}); the body is the
 * branch's payload. Answers:
 * <ul>
 *   <li>200 for {@code RAN}, {@code DUPLICATE} (the body is the stored result) and {@code EMPTY_ROLLBACK}, with
 *       {@value TccHeaders#OUTCOME};</li>
 *   <li>409 with {@value TccHeaders#OUTCOME}{@code : HANGING_REFUSED} for a Try that came after its Cancel;</li>
 *   <li>422 ({@code application/problem+json}, type {@code urn:converge:tcc:refused}) for a Try the work refused (a
 *       {@link BusinessException}; nothing stored);</li>
 *   <li>400 ({@code application/problem+json}, quoting the bad header) for missing or malformed TCC headers, 413
 *       for a body over the limit;</li>
 *   <li>422 ({@code application/problem+json}, type {@code urn:converge:tcc:cancel-after-confirm} or
 *       {@code urn:converge:tcc:confirm-after-cancel}) for a Cancel of a branch confirmed here or a Confirm of a
 *       branch cancelled here: an anomaly for the coordinator, nothing ran, nothing stored;</li>
 *   <li>500 ({@code application/problem+json}) for a technical failure, 503 with {@code Retry-After} when the database
 *       is unreachable or a row lock was not granted within the lock timeout; nothing stored, the coordinator asks
 *       again. A Confirm without its Try is a 500 of type {@code urn:converge:tcc:confirm-without-try}. The bodies of
 *       500 and 503 carry a stable type and text, never the exception (its details are in the log).</li>
 * </ul>
 * Each transaction sets {@code SET LOCAL lock_timeout} (default {@link #DEFAULT_LOCK_TIMEOUT}): a call blocked on
 * a row lock gives its pooled connection back rather than wait while the coordinator asks again.
 *
 * <p>Mount it where only the coordinator reaches it (mTLS, or the gateway's authentication): global and branch ids
 * are guessable, and a forged Cancel releases a branch's resources.
 * Thread-safe.
 */
public final class TccServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(TccServlet.class);

  /** The default largest request body: 1 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  /** The default lock timeout of a request's transaction: 5 s. */
  public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);
  /** The SQLState of a lock not granted within {@code lock_timeout}. */
  private static final String LOCK_NOT_AVAILABLE = "55P03";
  static final String PROBLEM = "application/problem+json";
  private static final String TYPE = "urn:converge:tcc:";

  private final transient DataSource dataSource;
  private final transient TccBarrier barrier;
  private final transient TccHttpWork onTry;
  private final transient TccHttpWork onConfirm;
  private final transient TccHttpWork onCancel;
  private final int maxBodyBytes;
  private final long lockTimeoutMillis;
  private final transient Tracing tracing;

  private TccServlet(Builder b) {
    this.tracing = b.tracing;
    this.dataSource = b.dataSource;
    this.barrier = b.barrier;
    this.onTry = b.onTry;
    this.onConfirm = b.onConfirm;
    this.onCancel = b.onCancel;
    this.maxBodyBytes = b.maxBodyBytes;
    this.lockTimeoutMillis = b.lockTimeout.toMillis();
  }

  /** A builder. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    // the coordinator's call carries the saga's trace (its span's traceparent): the branch's work is part of it
    Map<String, String> parent = new HashMap<>(2);
    for (String name : new String[]{Envelope.TRACEPARENT, "tracestate"}) {
      String value = req.getHeader(name);
      if (value != null) {
        parent.put(name, value);
      }
    }
    String operation = req.getHeader(TccHeaders.OPERATION);
    try (MessageSpan span = tracing.server("tcc " + (operation == null ? "?" : Text.abbreviate(operation, 16)) + " "
        + (req.getHeader(TccHeaders.BRANCH_ID) == null ? "?"
            : Text.abbreviate(req.getHeader(TccHeaders.BRANCH_ID),
                64)),
        parent)) {
      span.attribute("http.request.method", "POST").attribute("converge.tcc.global_id",
          req.getHeader(TccHeaders.GLOBAL_ID));
      try {
        serve(req, resp);
      } catch (IOException | RuntimeException e) {
        span.failed(e);
        throw e;
      }
      span.attribute("http.response.status_code", Integer.toString(resp.getStatus()));
    }
  }

  private void serve(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    TccCall call;
    try {
      call = call(req);
    } catch (IllegalArgumentException e) {
      problem(resp, 400, "headers-invalid", "The TCC headers are missing or malformed", e.getMessage());
      return;
    }
    byte[] payload = body(req.getInputStream());
    if (payload == null) {
      problem(resp, 413, "body-too-large", "The request body is too large",
          "the body must be at most " + maxBodyBytes + " bytes");
      return;
    }
    TccHttpWork work = switch (call.operation()) {
      case TRY -> onTry;
      case CONFIRM -> onConfirm;
      case CANCEL -> onCancel;
    };
    TccResult r;
    try {
      r = inTransaction(call, work, new TccHttpRequest(call, payload));
    } catch (BusinessException e) {
      if (call.operation() == TccOperation.TRY) {
        problem(resp, 422, "refused", "The Try was refused: " + e.reasonCode(), e.getMessage());
      } else {
        failed(resp, call, e, "failed");
      }
      return;
    } catch (ConfirmWithoutTryException e) {
      failed(resp, call, e, "confirm-without-try");
      return;
    } catch (CancelAfterConfirmException e) {
      log.error("TCC: a Cancel after its Confirm refused (422), nothing ran: the {}", call);
      problem(resp, 422, "cancel-after-confirm", "The Cancel was refused: the branch was confirmed",
          "the branch was confirmed here; the cancel did not run");
      return;
    } catch (ConfirmAfterCancelException e) {
      log.error("TCC: a Confirm after its Cancel refused (422), nothing ran: the {}", call);
      problem(resp, 422, "confirm-after-cancel", "The Confirm was refused: the branch was cancelled",
          "the branch was cancelled here; the confirm did not run");
      return;
    } catch (Exception e) {
      failed(resp, call, e, "failed");
      return;
    }
    resp.setHeader(TccHeaders.OUTCOME, r.outcome().name());
    if (r.outcome() == TccOutcome.HANGING_REFUSED) {
      problem(resp, 409, "hanging-refused", "The Try came after its Cancel and was refused",
          "the " + call + " was cancelled before this Try arrived; nothing ran");
      return;
    }
    resp.setStatus(200);
    resp.setContentType("application/json");
    resp.setContentLength(r.result().length);
    resp.getOutputStream().write(r.result());
  }

  private TccResult inTransaction(TccCall call, TccHttpWork work, TccHttpRequest request) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      boolean auto = c.getAutoCommit();
      c.setAutoCommit(false);
      try {
        try (Statement s = c.createStatement()) {
          s.execute("SET LOCAL lock_timeout = " + lockTimeoutMillis);
        }
        TccResult r = barrier.run(c, call, conn -> work.run(conn, request));
        c.commit();
        return r;
      } catch (Exception | Error e) {
        try {
          c.rollback();
        } catch (java.sql.SQLException rollbackFailed) {
          e.addSuppressed(rollbackFailed);
        }
        throw e;
      } finally {
        c.setAutoCommit(auto);
      }
    }
  }

  private void failed(HttpServletResponse resp, TccCall call, Exception e, String type) throws IOException {
    log.warn("TCC branch call failed, nothing stored: the {}", call, e);
    // the body is stable text: the exception (SQL states, constraint names, values) stays in the log
    if (DatabaseErrors.isOutage(e)) {
      resp.setHeader("Retry-After", "1");
      problem(resp, 503, "unavailable", "The participant's database is unreachable",
          "nothing was stored; ask again");
    } else if (LOCK_NOT_AVAILABLE.equals(DatabaseErrors.sqlState(e))) {
      resp.setHeader("Retry-After", "1");
      problem(resp, 503, "lock-timeout", "The branch is busy", "a lock was not granted within "
          + lockTimeoutMillis + " ms; nothing was stored; ask again");
    } else {
      problem(resp, 500, type, "The " + call.operation().wireName() + " failed; nothing was stored",
          "nothing was stored; ask again");
    }
  }

  private static TccCall call(HttpServletRequest req) {
    String tenant = req.getHeader(Envelope.TENANT);
    return new TccCall(tenant == null || tenant.isBlank() ? Envelope.DEFAULT_TENANT
        : check(Envelope.TENANT, tenant,
            TccCall.MAX_TENANT),
        check(TccHeaders.GLOBAL_ID, req.getHeader(TccHeaders.GLOBAL_ID), TccCall.MAX_ID),
        check(TccHeaders.BRANCH_ID, req.getHeader(TccHeaders.BRANCH_ID), TccCall.MAX_ID),
        TccOperation.fromWireName(req.getHeader(TccHeaders.OPERATION)));
  }

  private static String check(String header, String value, int max) {
    Require.that(value != null && !value.isBlank() && value.length() <= max, "header " + header,
        "be 1 to " + max + " characters, not blank", value == null ? "absent" : "'" + value + "'");
    return value;
  }

  /** The body, or null when it is longer than the limit. */
  private byte[] body(InputStream in) throws IOException {
    byte[] b = in.readNBytes(maxBodyBytes + 1);
    return b.length > maxBodyBytes ? null : b;
  }

  private static void problem(HttpServletResponse resp, int status, String code, String title, String detail)
      throws IOException {
    StringBuilder b = new StringBuilder("{\"type\":");
    Json.quote(b, TYPE + code).append(",\"title\":");
    Json.quote(b, title).append(",\"status\":").append(status).append(",\"detail\":");
    Json.quote(b, detail).append('}');
    byte[] body = b.toString().getBytes(StandardCharsets.UTF_8);
    resp.setStatus(status);
    resp.setContentType(PROBLEM);
    resp.setContentLength(body.length);
    resp.getOutputStream().write(body);
  }

  /** Builds a {@link TccServlet}; not thread-safe; validated in {@link #build()}. */
  public static final class Builder {

    private DataSource dataSource;
    private TccBarrier barrier;
    private TccHttpWork onTry;
    private TccHttpWork onConfirm;
    private TccHttpWork onCancel;
    private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
    private Tracing tracing = Tracing.global();

    private Builder() {
    }

    /**
     * Where each call's SERVER span {@code tcc <operation> <branch>} goes (default {@link Tracing#global()}): a child
     * of the request's {@code traceparent} (the coordinator's call, in the saga's trace), current while the barrier
     * and the work run; without one, or with a malformed one, a new trace.
     */
    public Builder tracing(Tracing tracing) {
      this.tracing = tracing;
      return this;
    }

    /** The participant's database: the barrier rows and the work share each request's transaction; required. */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /** The barrier; default {@code TccBarrier.builder().build()} (no metrics). */
    public Builder barrier(TccBarrier barrier) {
      this.barrier = barrier;
      return this;
    }

    /** The Try, Confirm and Cancel work of the branch; all three required. */
    public Builder work(TccHttpWork onTry, TccHttpWork onConfirm, TccHttpWork onCancel) {
      this.onTry = onTry;
      this.onConfirm = onConfirm;
      this.onCancel = onCancel;
      return this;
    }

    /** The largest request body accepted (413 above it); 1..64 MiB, default {@link #DEFAULT_MAX_BODY_BYTES}. */
    public Builder maxBodyBytes(int maxBodyBytes) {
      this.maxBodyBytes = maxBodyBytes;
      return this;
    }

    /**
     * How long a statement of a request's transaction waits for a row lock ({@code SET LOCAL lock_timeout}) before
     * the request is answered 503 (nothing stored); 1 ms..10 min, default {@link #DEFAULT_LOCK_TIMEOUT}.
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws NullPointerException naming a missing setting
     * @throws IllegalArgumentException naming the setting and quoting the bad value
     */
    public TccServlet build() {
      Require.present("tcc.http.dataSource", dataSource);
      Require.present("tcc.http.onTry", onTry);
      Require.present("tcc.http.onConfirm", onConfirm);
      Require.present("tcc.http.onCancel", onCancel);
      Require.present("tcc.http.tracing", tracing);
      Require.between("tcc.http.maxBodyBytes", maxBodyBytes, 1, 64 << 20);
      Require.between("tcc.http.lockTimeout", lockTimeout, Duration.ofMillis(1), Duration.ofMinutes(10),
          "1 ms and 10 min");
      if (barrier == null) {
        barrier = TccBarrier.builder().build();
      }
      return new TccServlet(this);
    }
  }
}
