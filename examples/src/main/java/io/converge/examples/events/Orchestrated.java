package io.converge.examples.events;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;

/**
 * A bean of the orchestrated order saga (the order service's saga coordinator sends commands to participants):
 * present when {@value #PROPERTY} is {@code orchestration}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ConditionalOnProperty(name = Orchestrated.PROPERTY, havingValue = "orchestration")
public @interface Orchestrated {

  /** The property that chooses the flow: {@code choreography} (default) or {@code orchestration}. */
  String PROPERTY = "examples.saga.flow";
}
