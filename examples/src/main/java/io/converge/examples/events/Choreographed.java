package io.converge.examples.events;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;

/**
 * A bean of the choreographed order saga (events chained by the services), the default: present unless
 * {@value Orchestrated#PROPERTY} is {@code orchestration}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ConditionalOnProperty(name = Orchestrated.PROPERTY, havingValue = "choreography", matchIfMissing = true)
public @interface Choreographed {
}
