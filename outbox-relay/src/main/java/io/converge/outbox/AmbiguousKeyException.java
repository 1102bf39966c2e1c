package io.converge.outbox;

import io.converge.core.ConvergeException;
import java.util.List;

/**
 * A resume named an outbox key that is parked on more than one line (tenant and topic): nothing was
 * resumed. Name the tenant and/or the topic ({@link Outbox#resume(String, String, String)},
 * {@code converge outbox resume KEY --tenant T --topic P}).
 */
public final class AmbiguousKeyException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final List<String> lines;

  /**
   * @param key the key
   * @param lines the parked lines of the key that matched, as {@code tenant 'T', topic 'P'}
   */
  public AmbiguousKeyException(String key, List<String> lines) {
    super("Outbox key '" + key + "' is parked on " + lines.size() + " lines (" + String.join("; ", lines)
        + "): name the tenant and/or the topic; nothing was resumed");
    this.key = key;
    this.lines = List.copyOf(lines);
  }

  /** The key. */
  public String key() {
    return key;
  }

  /** The parked lines that matched, as {@code tenant 'T', topic 'P'}. */
  public List<String> lines() {
    return lines;
  }
}
