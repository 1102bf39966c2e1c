package io.converge.console.trace;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One thing Converge recorded about a payment, as the timeline shows it. Immutable.
 *
 * @param at when it happened (the database's time of the row: its transaction's start for rows written with
 *     {@code now()}, the writer's clock for the others)
 * @param source the table it comes from: {@code converge_outbox}, {@code converge_dedup}, ...
 * @param subject the id it is about: a message id, an Idempotency-Key, an entity id
 * @param what what happened, for a person
 * @param details more named values, in display order
 */
public record TimelineEvent(Instant at, String source, String subject, String what, Map<String, String> details) {

  /** Checks the required values and copies {@code details}. */
  public TimelineEvent {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(source, "source");
    subject = subject == null ? "" : subject;
    Objects.requireNonNull(what, "what");
    details = details == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(details));
  }

  /** One line: time, source, subject, what, then the details as {@code name=value}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder().append(at).append("  ").append(source).append("  ").append(subject)
        .append("  ").append(what);
    details.forEach((k, v) -> b.append("  ").append(k).append('=').append(v));
    return b.toString();
  }
}
