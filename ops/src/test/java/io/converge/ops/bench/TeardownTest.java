package io.converge.ops.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a scenario opened is closed last first, each even when an earlier close fails, and only once. */
class TeardownTest {

  @Test
  void closesLastFirstAndOnlyOnce() throws Exception {
    List<String> closed = new ArrayList<>();
    Teardown teardown = new Teardown();
    String executor = teardown.add("executor", closed::add);
    teardown.add(() -> closed.add("client"));
    assertThat(executor).isEqualTo("executor");

    teardown.close();
    teardown.close();

    assertThat(closed).containsExactly("client", "executor");
  }

  @Test
  void aFailingCloseDoesNotKeepTheOthersOpenAndIsThrownWithTheLaterFailures() {
    List<String> closed = new ArrayList<>();
    Teardown teardown = new Teardown();
    teardown.add("first", closed::add);
    teardown.add("second", r -> {
      throw new IllegalStateException("second failed");
    });
    teardown.add("third", r -> {
      throw new IllegalStateException("third failed");
    });

    assertThatThrownBy(teardown::close).hasMessage("third failed")
        .satisfies(
            e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage).containsExactly("second failed"));
    assertThat(closed).containsExactly("first");
  }
}
