package io.converge.saga.tcc;

import java.util.Locale;

/** The three operations of a TCC branch. */
public enum TccOperation {

  /** Reserve (freeze) the resource. */
  TRY,
  /** Apply the reservation; runs only after a Try that ran. */
  CONFIRM,
  /** Release the reservation; meets the barrier when its Try never ran (an empty rollback). */
  CANCEL;

  /** The value of {@link TccHeaders#OPERATION}: the lower-case name. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The operation named by a header value.
   *
   * @throws IllegalArgumentException when {@code wireName} is null or names no operation; the message quotes it
   */
  public static TccOperation fromWireName(String wireName) {
    if (wireName != null) {
      for (TccOperation op : values()) {
        if (op.wireName().equals(wireName)) {
          return op;
        }
      }
    }
    throw new IllegalArgumentException(
        TccHeaders.OPERATION + " must be one of try, confirm, cancel, but was "
            + (wireName == null ? "null" : "'" + wireName + "'"));
  }
}
