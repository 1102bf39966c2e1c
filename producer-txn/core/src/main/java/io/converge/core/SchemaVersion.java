package io.converge.core;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The schema of a message's payload: a type name and a version, carried in the {@link Envelope#SCHEMA} header as
 * {@code <type>/<major>.<minor>}, e.g. {@code order-created/2.1}. The type is 1..128 ASCII letters, digits,
 * {@code . _ -}, starting with a letter or digit, compared case-sensitively; major and minor are decimal numbers
 * without leading zeros, 0..999999999. A new minor version only adds what a reader of an older minor of the same major
 * may ignore; anything else is a new major. Immutable and thread-safe.
 *
 * @param type the payload's type name
 * @param major the major version: readers declare the majors they accept
 * @param minor the minor version: any minor of an accepted major is read
 */
public record SchemaVersion(String type, int major, int minor) {

  /** The type name's syntax. */
  public static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  private static final String NUMBER = "(0|[1-9][0-9]{0,8})";
  private static final Pattern HEADER = Pattern.compile("(" + TYPE.pattern() + ")/" + NUMBER + "\\." + NUMBER);

  /**
   * Validates.
   *
   * @throws InvalidMessageException naming the bad part and quoting it
   */
  public SchemaVersion {
    if (type == null || !TYPE.matcher(type).matches()) {
      throw new InvalidMessageException("schema.type must match " + TYPE.pattern() + ", but was "
          + (type == null ? "null" : "'" + type + "'"), null, null);
    }
    if (major < 0 || major > 999_999_999 || minor < 0 || minor > 999_999_999) {
      throw new InvalidMessageException("schema version of '" + type + "' must be two numbers between 0 and "
          + "999999999, but was " + major + "." + minor, null, null);
    }
  }

  /**
   * Parses a {@link Envelope#SCHEMA} header value.
   *
   * @throws InvalidMessageException quoting {@code header} when it is not {@code <type>/<major>.<minor>}
   */
  public static SchemaVersion parse(String header) {
    Matcher m = header == null ? null : HEADER.matcher(header);
    if (m == null || !m.matches()) {
      throw new InvalidMessageException(Envelope.SCHEMA + " must be <type>/<major>.<minor> (" + HEADER.pattern()
          + "), but was " + (header == null ? "null" : "'" + header + "'"), null, null);
    }
    return new SchemaVersion(m.group(1), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
  }

  /** The header value, {@code <type>/<major>.<minor>}. */
  @Override
  public String toString() {
    return type + "/" + major + "." + minor;
  }
}
