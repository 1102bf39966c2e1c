package io.converge.consumer;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a method of a Spring bean as an idempotent message handler. The Spring Boot
 * auto-configuration subscribes it to {@link #topic()} as consumer group {@link #group()} and runs it
 * through an {@link IdempotentHandler}: one transaction claims {@code (tenant, group, message id)},
 * runs the method, commits, then the message is acked; a duplicate is acked without running it.
 *
 * <p>The method takes {@code (java.sql.Connection, IncomingMessage)} or {@code (IncomingMessage)};
 * in the second form its {@code JdbcTemplate}/{@code DataSource} writes join the transaction through
 * Spring's transaction manager. Thread pools, timeouts and retry settings are configuration
 * ({@code converge.consumer.*}), not attributes.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface IdempotentConsumer {

  /** The topic to subscribe to; {@code ${…}} placeholders are resolved from the Spring environment. */
  String topic();

  /** The consumer group: the broker's group and the dedup scope; placeholders are resolved. */
  String group();

  /** The name of a failure policy under {@code converge.consumer.policies.<name>}; default {@code "default"}. */
  String policy() default "default";

  /**
   * The processing span's relation to the message's creation context: linked (false, the default and the messaging
   * conventions' choice) or its child (true, one trace from the request to the last consumer); see
   * {@code IdempotentHandler.Builder#traceAsParent}.
   */
  boolean traceAsParent() default false;
}
