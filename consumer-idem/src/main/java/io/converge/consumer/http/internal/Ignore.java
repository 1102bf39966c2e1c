package io.converge.consumer.http.internal;

import java.util.HashMap;
import java.util.Map;

/** A node of the ignored-paths tree of {@link JsonCanonicalizer}: a leaf removes the field, an inner node descends. */
final class Ignore {

  final Map<String, Ignore> children = new HashMap<>();
  boolean leaf;
}
