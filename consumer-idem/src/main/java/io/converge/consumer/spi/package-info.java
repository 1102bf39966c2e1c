/**
 * Service-provider interfaces of consumer-idem: {@link io.converge.consumer.spi.ConsumerBinding}, the
 * transport that delivers messages to an {@code IdempotentHandler}, and
 * {@link io.converge.consumer.spi.InFlightHandlers}, which lets a binding stop a handler that waits out an outage.
 */
package io.converge.consumer.spi;
