package io.converge.broker.junit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A shared server lives as long as its JVM, not as long as the launcher execution that first asked for it: with
 * {@code forkCount} above 1 the test plugins run each class in an execution of its own (its own root context, closed
 * after the class), and the server must still be the one the previous class used. Each call here passes its own (no)
 * context, as each such execution would.
 */
class SharedServerTest {

  /** The owners, one per test, so that the JVM-wide map does not carry a server from one test to the next. */
  private static final class OwnerA {
  }

  private static final class OwnerB {
  }

  @Test
  void aServerIsStartedOnceForTheJvmWhateverContextAsksForIt() {
    AtomicInteger starts = new AtomicInteger();
    AtomicInteger stops = new AtomicInteger();
    Integer first = TypedParameterResolver.sharedServer(null, OwnerA.class, starts::incrementAndGet,
        s -> stops.incrementAndGet());
    Integer second = TypedParameterResolver.sharedServer(null, OwnerA.class, starts::incrementAndGet,
        s -> stops.incrementAndGet());
    assertThat(second).isSameAs(first);
    assertThat(starts).hasValue(1);
    assertThat(stops).as("stopped only when the JVM exits").hasValue(0);
  }

  @Test
  void aFailedStartIsNotKeptSoTheNextCallStartsAgain() {
    assertThatThrownBy(() -> TypedParameterResolver.sharedServer(null, OwnerB.class, () -> {
      throw new IllegalStateException("port taken");
    }, s -> {
    })).hasMessage("port taken");
    assertThat(TypedParameterResolver.<String>sharedServer(null, OwnerB.class, () -> "up", s -> {
    })).isEqualTo("up");
  }
}
