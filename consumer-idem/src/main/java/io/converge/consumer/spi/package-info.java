/**
 * Service-provider interfaces of consumer-idem: {@link io.converge.consumer.spi.ConsumerBinding}, the
 * transport that delivers messages to an {@code IdempotentHandler}.
 */
package io.converge.consumer.spi;
