package io.converge.consumer.http.internal;

import io.converge.consumer.http.CallbackException;
import io.converge.consumer.http.CallbackMetrics;
import io.converge.consumer.http.CallbackProblem;
import io.converge.consumer.http.CallbackSecrets;
import io.converge.consumer.http.CallbackSettings;
import io.converge.consumer.http.IdempotencyFilter;
import io.converge.consumer.http.IdempotencyMetrics;
import io.converge.consumer.http.IdempotencySettings;
import io.converge.consumer.http.IdempotentEndpoint;
import io.converge.consumer.http.SignedCallbackFilter;
import io.converge.consumer.http.TenantResolver;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.util.Collections;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SignedCallbackFilter}: reads the body once (bounded), verifies the signature and its timestamp, then hands
 * the callback to an Idempotency-Key filter of its own, keyed by the signed text's digest, so that the store, not a
 * second one, makes the handler run once and answers copies with the first answer.
 */
public final class DefaultSignedCallbackFilter implements SignedCallbackFilter {

  private static final Logger log = LoggerFactory.getLogger(DefaultSignedCallbackFilter.class);
  /** The header the filter sets to the callback's key for its Idempotency-Key filter (a client's is hidden). */
  static final String KEY_HEADER = "Converge-Callback-Key";
  /** The prefix of a callback's key: {@code cb-<sha-256 of the signed text>}. */
  static final String KEY_PREFIX = "cb-";

  private final String provider;
  private final CallbackSecrets secrets;
  private final CallbackSettings settings;
  private final CallbackMetrics metrics;
  private final Clock clock;
  private final EndpointRules rules;
  private final IdempotencyFilter store;

  /** Built by {@code SignedCallbackFilter.builder()}; arguments are validated there. */
  public DefaultSignedCallbackFilter(DataSource dataSource, String provider, CallbackSecrets secrets,
      List<IdempotentEndpoint> endpoints, CallbackSettings settings, CallbackMetrics metrics, Clock clock) {
    this.provider = provider;
    this.secrets = secrets;
    this.settings = settings;
    this.metrics = metrics;
    this.clock = clock;
    List<IdempotentEndpoint> required = endpoints.stream().map(e -> e.withRequired(true)).toList();
    IdempotencySettings keys = new IdempotencySettings(settings.replayWindow(), IdempotencySettings.DEFAULT_LEASE,
        KEY_HEADER, IdempotencySettings.DEFAULT_REPLAYED_HEADERS, List.of(), settings.maxBodyBytes());
    this.rules = new EndpointRules(() -> required, keys);
    required.forEach(keys::validate);
    this.store = IdempotencyFilter.builder().dataSource(dataSource)
        .tenantResolver(TenantResolver.fixed("callback:" + provider)).endpoints(required).settings(keys)
        .metrics(new Replays(metrics)).build();
  }

  /** Stops the store's lease renewals and gives their connection back. */
  @Override
  public void destroy() {
    store.destroy();
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    Rule rule = rules.match(request.getMethod(), RequestPaths.views(request));
    if (rule == null) {
      chain.doFilter(req, res);
      return;
    }
    String endpoint = rule.endpoint().toString();
    byte[] body;
    String key;
    try {
      CallbackSignature signature = CallbackSignature.parse(settings.signatureHeader(), header(request));
      body = body(request);
      if (!signature.matchesAny(activeSecrets(), body)) {
        throw new CallbackException(CallbackProblem.SIGNATURE_MISMATCH, "No v1 signature of "
            + settings.signatureHeader() + " matches the body under any active secret of provider " + provider);
      }
      long skew = clock.instant().getEpochSecond() - signature.timestamp();
      if (Math.abs(skew) > settings.tolerance().toSeconds()) {
        throw new CallbackException(CallbackProblem.TIMESTAMP_OUT_OF_TOLERANCE, "t=" + signature.text() + " is "
            + Math.abs(skew) + " s " + (skew > 0 ? "behind" : "ahead of") + " the server's clock; the tolerance is "
            + settings.tolerance().toSeconds() + " s either way");
      }
      key = KEY_PREFIX + signature.digest(body);
    } catch (CallbackException e) {
      refuse(request, response, endpoint, e);
      return;
    }
    metrics.verified(endpoint);
    log.debug("Callback of provider {} on {} verified; key {}", provider, endpoint, key);
    store.doFilter(new CallbackRequest(request, body, KEY_HEADER, key), response, chain);
  }

  private String header(HttpServletRequest request) {
    List<String> values = Collections.list(request.getHeaders(settings.signatureHeader()));
    if (values.isEmpty()) {
      throw new CallbackException(CallbackProblem.SIGNATURE_MISSING,
          "This endpoint requires a " + settings.signatureHeader() + " header (t=<unix seconds>,v1=<hex HMAC>)");
    }
    if (values.size() > 1) {
      throw new CallbackException(CallbackProblem.SIGNATURE_MALFORMED,
          settings.signatureHeader() + " must be sent once, but was sent " + values.size() + " times");
    }
    return values.get(0);
  }

  /** The body, read once; refused before reading when its declared length is over the limit, else at the limit. */
  private byte[] body(HttpServletRequest request) throws IOException {
    int max = settings.maxBodyBytes();
    long declared = request.getContentLengthLong();
    if (declared > max) {
      throw tooLarge(declared + " bytes declared");
    }
    try (InputStream in = request.getInputStream()) {
      byte[] body = in.readNBytes(max + 1);
      if (body.length > max) {
        throw tooLarge("more than " + max + " bytes sent");
      }
      return body;
    }
  }

  private CallbackException tooLarge(String what) {
    return new CallbackException(CallbackProblem.BODY_TOO_LARGE, "The callback's body must be at most "
        + settings.maxBodyBytes() + " bytes (converge.callback.max-body-size), but " + what);
  }

  private List<byte[]> activeSecrets() {
    List<byte[]> active;
    try {
      active = secrets.secrets();
    } catch (RuntimeException e) {
      throw new CallbackException(CallbackProblem.SECRETS_UNAVAILABLE,
          "The secrets of provider " + provider + " could not be read", e);
    }
    if (active == null || active.isEmpty() || active.stream().anyMatch(s -> s == null || s.length == 0)) {
      throw new CallbackException(CallbackProblem.SECRETS_UNAVAILABLE,
          "The secrets provider of " + provider + " returned no secret, or an empty one");
    }
    return active;
  }

  private void refuse(HttpServletRequest request, HttpServletResponse response, String endpoint, CallbackException e)
      throws IOException {
    metrics.refused(endpoint, e.problem());
    boolean clientError = e.problem().status() < 500;
    if (clientError) {
      // debug, not warn: anyone can send a request, and a flood of forged ones must not flood the log (the
      // refusal is counted by reason: callback.refused)
      log.debug("Refused callback of provider {} on {} from {}: {} {}", provider, endpoint, request.getRemoteAddr(),
          e.problem().code(), e.getMessage());
    } else {
      log.error("Refused callback of provider {} on {}: {}", provider, endpoint, e.problem().code(), e);
      response.setHeader("Retry-After", "1");
    }
    Problems.write(response, e.problem(), clientError ? e.getMessage() : null);
  }

  /** The store's replays counted as the callback's; its other counts are the store's own business. */
  private record Replays(CallbackMetrics metrics) implements IdempotencyMetrics {

    @Override
    public void hit(String endpoint) {
      metrics.replayed(endpoint);
    }

    @Override
    public void conflict(String endpoint) {
    }

    @Override
    public void inProgress(String endpoint) {
    }
  }
}
