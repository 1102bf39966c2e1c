/**
 * A payment's timeline: {@link io.converge.console.trace.Timeline} reads, for a business id, message id or
 * Idempotency-Key, everything Converge recorded about it, in time order. Used by {@code converge trace} and the
 * console's trace page.
 */
package io.converge.console.trace;
