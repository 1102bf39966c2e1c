/**
 * The Spring Boot starter's glue (the auto-configuration itself lives in the modules' {@code spring}
 * packages): {@link io.converge.starter.ConvergeStarterDefaults} gives the starter's property defaults
 * ({@code converge.rocketmq.name-server} for every RocketMQ address, the Idempotency-Key filter on), and
 * {@link io.converge.starter.ConvergeStarterAutoConfiguration} checks at start that the broker client
 * {@code converge.producer.mode} needs is on the classpath.
 */
package io.converge.starter;
