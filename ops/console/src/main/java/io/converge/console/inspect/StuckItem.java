package io.converge.console.inspect;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One stuck (or waiting) item, as the console lists it. Immutable.
 *
 * @param kind what it is
 * @param id its id within its kind: a dead letter's or ticket's number, a message id, a transaction
 *     {@code (most,least)}, {@code tenant/key} of an Idempotency-Key, {@code machine/entity} of a state
 * @param key the message key, order key, Idempotency-Key or entity id; null when it has none
 * @param tenant the tenant; null when the kind has none
 * @param topic the topic (the request path of an Idempotency-Key); null when the kind has none
 * @param since when it entered the state it waits in
 * @param age how long it has waited, measured by the database's clock
 * @param reason why it waits, for a person
 * @param details more named values, in display order (group, attempts, message id, ...)
 */
public record StuckItem(StuckKind kind, String id, String key, String tenant, String topic, Instant since,
    Duration age, String reason, Map<String, String> details) {

  /** Checks the required values and copies {@code details}. */
  public StuckItem {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(since, "since");
    Objects.requireNonNull(age, "age");
    reason = reason == null ? "" : reason;
    details = details == null ? Map.of()
        : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(details));
  }
}
