package io.converge.examples.demo;

import io.converge.examples.events.Orchestrated;
import java.util.List;
import java.util.Locale;

/** The two flows of the order saga: one value of {@code examples.saga.flow}, the same for every service of a run. */
public enum Flow {

  /** Events chained by the services; compensation by an event. */
  CHOREOGRAPHY,
  /** The order service's saga coordinator commands the participants (converge-saga). */
  ORCHESTRATION;

  /** Both, in the order the demo runs them on a backend. */
  public static final List<Flow> ALL = List.of(CHOREOGRAPHY, ORCHESTRATION);

  /** The property that chooses the flow. */
  public static final String PROPERTY = Orchestrated.PROPERTY;

  /** The value of {@link #PROPERTY}. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The flow of a run with {@code properties} (choreography when they do not say). */
  public static Flow of(java.util.Map<String, String> properties) {
    return parse(properties.getOrDefault(PROPERTY, CHOREOGRAPHY.value()));
  }

  /** Parses {@code choreography} or {@code orchestration}. */
  public static Flow parse(String s) {
    for (Flow f : values()) {
      if (f.value().equalsIgnoreCase(s.trim())) {
        return f;
      }
    }
    throw new IllegalArgumentException("flow must be choreography or orchestration, but was " + s);
  }
}
