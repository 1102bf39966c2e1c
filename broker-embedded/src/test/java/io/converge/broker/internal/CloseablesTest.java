package io.converge.broker.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Closing several resources: each is closed in order even after one failed, and the first failure is kept. */
class CloseablesTest {

  @Test
  void closesEachInOrderAndThrowsTheFirstFailureWithTheLaterOnesSuppressed() {
    List<String> closed = new ArrayList<>();
    List<AutoCloseable> resources = List.of(() -> closed.add("a"), () -> {
      throw new IOException("b failed");
    }, () -> closed.add("c"), () -> {
      throw new IllegalStateException("d failed");
    });

    assertThatThrownBy(() -> Closeables.closeAll(resources)).isInstanceOf(IOException.class).hasMessage("b failed")
        .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage).containsExactly("d failed"));
    assertThat(closed).containsExactly("a", "c");
  }

  @Test
  void addsEveryFailureToCloseToTheFailureAlreadyThere() {
    List<String> closed = new ArrayList<>();
    RuntimeException cause = new IllegalStateException("start failed");
    List<AutoCloseable> resources = List.of(() -> {
      throw new IOException("a failed");
    }, () -> closed.add("b"));

    assertThat(Closeables.closeAll(resources, cause)).isSameAs(cause);
    assertThat(cause.getSuppressed()).extracting(Throwable::getMessage).containsExactly("a failed");
    assertThat(closed).containsExactly("b");
  }

  @Test
  void returnsNullWhenEverythingClosed() throws Exception {
    List<String> closed = new ArrayList<>();

    assertThat(Closeables.closeAll(List.of(() -> closed.add("a")), null)).isNull();
    Closeables.closeAll(List.of(() -> closed.add("b")));
    assertThat(closed).containsExactly("a", "b");
  }
}
