package io.converge.console.internal;

import java.util.Locale;

/**
 * How the console names its enum constants in URLs and properties: lower case, {@code -} for {@code _}
 * ({@code OUTBOX_PARKED} is {@code outbox-parked}). Not for users. Stateless.
 */
public final class Slugs {

  private Slugs() {
  }

  /** The slug of {@code constant}: {@code outbox-parked} for {@code OUTBOX_PARKED}. */
  public static String of(Enum<?> constant) {
    return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * The constant of {@code type} named by {@code slug} (a slug or the constant's name, any case, blanks around it
   * ignored).
   *
   * @throws IllegalArgumentException when {@code type} has no such constant
   */
  public static <E extends Enum<E>> E parse(Class<E> type, String slug) {
    return Enum.valueOf(type, slug.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
  }
}
