package io.converge.core;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Generates time-ordered message ids: UUID version 7 (RFC 9562), 48 bits of epoch milliseconds, then a
 * 12-bit counter within the millisecond (monotonic in one JVM), then 62 random bits.
 *
 * <p>The random bits tell apart the ids of different generators (JVMs) in the same millisecond: they come
 * from a fast generator seeded once from {@link SecureRandom}. An id needs to be unique, not unguessable,
 * and a {@code SecureRandom} call per id (a global lock and a read of the system's entropy source) was
 * about 5% of the CPU of a RocketMQ unit of work's thread (converge bench, JFR, issue 15).
 *
 * <p>Thread-safe. Ids from one instance are strictly increasing in {@link UUID#toString()} order.
 */
public final class MessageIds {

  private static final MessageIds DEFAULT = new MessageIds(Clock.systemUTC());

  private final Clock clock;
  /** Guarded by {@link #lock}. */
  private final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
  private final ReentrantLock lock = new ReentrantLock();
  private long lastMillis = -1;
  private int counter;

  /** An id generator reading time from {@code clock}. */
  public MessageIds(Clock clock) {
    this.clock = clock;
  }

  /** The shared generator on the system clock. */
  public static MessageIds shared() {
    return DEFAULT;
  }

  /** A new id, as its canonical 36-character text. */
  public String next() {
    long millis;
    int seq;
    long bits;
    lock.lock();
    try {
      millis = clock.millis();
      if (millis <= lastMillis) {
        millis = lastMillis;
        counter++;
        if (counter > 0xFFF) { // counter exhausted: borrow the next millisecond, stay monotonic
          millis = ++lastMillis;
          counter = 0;
        }
      } else {
        lastMillis = millis;
        counter = 0;
      }
      seq = counter;
      bits = random.nextLong();
    } finally {
      lock.unlock();
    }
    long msb = (millis << 16) | 0x7000L | seq;
    long lsb = (bits & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
    return new UUID(msb, lsb).toString();
  }

  /**
   * The UTC day of a UUIDv7 id's timestamp (its first 48 bits, epoch milliseconds), derived from the id alone: the
   * same for every copy of a message, on every instance, whatever their clocks.
   *
   * @return null when {@code id} is null or not a canonical UUID text of version 7 (a foreign id)
   */
  public static java.time.LocalDate dayOf(String id) {
    if (!isValid(id)) {
      return null;
    }
    UUID uuid = UUID.fromString(id);
    if (uuid.version() != 7) {
      return null;
    }
    long millis = uuid.getMostSignificantBits() >>> 16;
    return java.time.LocalDate.ofEpochDay(Math.floorDiv(millis, 86_400_000L));
  }

  /** Whether {@code id} is a canonical UUID text (any version); null is not. */
  public static boolean isValid(String id) {
    if (id == null || id.length() != 36) {
      return false;
    }
    try {
      return UUID.fromString(id).toString().equals(id.toLowerCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
