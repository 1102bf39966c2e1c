package io.converge.consumer.http;

/**
 * An answer one of Converge's filters gives instead of running the handler, as an {@code application/problem+json}
 * body (RFC 9457): {@link IdempotencyProblem} (the Idempotency-Key filter) and {@link CallbackProblem} (the
 * signed-callback filter). Each constant carries its {@link Spec}; the accessors read it.
 */
public interface HttpProblem {

  /** What a problem is: its status, short code and title, and the URN prefix of its {@code type}. */
  record Spec(String typePrefix, int status, String code, String title) {
  }

  /** This problem's description. */
  Spec spec();

  /** The HTTP status. */
  default int status() {
    return spec().status();
  }

  /** The short code, also the {@code reason} tag of the filter's refusal meter. */
  default String code() {
    return spec().code();
  }

  /** The problem {@code type} URI, e.g. {@code urn:converge:idempotency:key-reused}. */
  default String type() {
    return spec().typePrefix() + spec().code();
  }

  /** The problem {@code title}. */
  default String title() {
    return spec().title();
  }
}
