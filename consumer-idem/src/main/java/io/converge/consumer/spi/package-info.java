/**
 * Service-provider interfaces of consumer-idem: {@link io.converge.consumer.spi.ConsumerBinding}, the
 * transport that delivers messages to an {@code IdempotentHandler}, and
 * {@link io.converge.consumer.spi.InFlightHandlers}, which lets a binding stop a handler that waits out an outage,
 * and {@link io.converge.consumer.spi.HeldReleaser}, which runs the messages held behind a parked message of their
 * key once it was resumed or discarded, and {@link io.converge.consumer.spi.ForwardingIdempotentHandler}, the base of a
 * decorator of a handler's deliveries.
 */
package io.converge.consumer.spi;
