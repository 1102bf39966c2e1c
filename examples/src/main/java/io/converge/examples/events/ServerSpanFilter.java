package io.converge.examples.events;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerMapping;

/**
 * An HTTP SERVER span per request (the semantic conventions' {@code {method} {route}}, {@code http.request.method},
 * {@code url.path}, {@code http.route}, {@code http.response.status_code}), a child of the request's W3C
 * {@code traceparent} when it carries one, current while the request runs: what an HTTP instrumentation (the
 * OpenTelemetry agent, Micrometer Tracing) does, which the examples do not carry. Nothing without an SDK.
 */
public final class ServerSpanFilter extends OncePerRequestFilter {

  static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
  static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
  static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");

  private static final TextMapGetter<HttpServletRequest> HEADERS = new TextMapGetter<>() {

    @Override
    public Iterable<String> keys(HttpServletRequest carrier) {
      return Collections.list(carrier.getHeaderNames());
    }

    @Override
    public String get(HttpServletRequest carrier, String key) {
      return carrier == null ? null : carrier.getHeader(key);
    }
  };

  private final OpenTelemetry openTelemetry;

  /** Spans with {@code openTelemetry}; none when null. */
  public ServerSpanFilter(OpenTelemetry openTelemetry) {
    this.openTelemetry = openTelemetry;
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    if (openTelemetry == null) {
      chain.doFilter(request, response);
      return;
    }
    Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), request, HEADERS);
    String method = request.getMethod();
    Span span = openTelemetry.getTracer("io.converge.examples").spanBuilder(method).setParent(parent)
        .setSpanKind(SpanKind.SERVER).setAttribute(METHOD, method).setAttribute(PATH, request.getRequestURI())
        .startSpan();
    try (Scope ignored = span.makeCurrent()) {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException e) {
      span.recordException(e);
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      if (request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE) instanceof String route) {
        span.setAttribute(ROUTE, route);
        span.updateName(method + " " + route);
      }
      span.setAttribute(STATUS, (long) response.getStatus());
      if (response.getStatus() >= 500) {
        span.setStatus(StatusCode.ERROR);
      }
      span.end();
    }
  }
}
