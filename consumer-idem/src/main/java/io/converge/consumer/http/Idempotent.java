package io.converge.consumer.http;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Spring MVC handler method as an Idempotency-Key endpoint, for each of its request mappings'
 * methods and path patterns. The expected duration (for {@code Retry-After}) and the ignored fields
 * come from configuration ({@code converge.idempotency.default-expected-duration},
 * {@code converge.idempotency.ignored-fields}); an entry of {@code converge.idempotency.endpoints}
 * matching the same request takes precedence.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Idempotent {

  /** Whether a request without {@code Idempotency-Key} is refused with 400; when false it runs unprotected. Default true. */
  boolean required() default true;
}
