/**
 * The transactional outbox: {@link io.converge.outbox.OutboxBackend} writes messages into
 * {@code converge_outbox} inside the caller's DB transaction; {@link io.converge.outbox.OutboxRelay}
 * publishes them to a broker through an {@link io.converge.outbox.spi.OutboxSink}, in order per key,
 * with any number of relay instances; {@link io.converge.outbox.Outbox} shows and resumes parked keys
 * and purges published rows.
 */
package io.converge.outbox;
