/**
 * Spring Boot auto-configuration of consumer-idem (Spring is an optional dependency): subscribes
 * {@link io.converge.consumer.IdempotentConsumer} methods, binds {@code converge.consumer.*}, joins
 * Spring-managed transactions, schedules the dedup purge and exports metrics.
 */
package io.converge.consumer.spring;
