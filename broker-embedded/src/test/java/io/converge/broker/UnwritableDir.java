package io.converge.broker;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** The embedded servers' check of their data directory: a directory no one can create, and the error naming it. */
public final class UnwritableDir {

  private UnwritableDir() {
  }

  /** {@code name} below a regular file in {@code tmp}: not writable whoever runs the test (root ignores permission bits). */
  public static Path below(Path tmp, String name) throws IOException {
    return Files.createFile(tmp.resolve("a-file")).resolve(name);
  }

  /** Asserts that {@code start} fails with an {@link EmbeddedServerException} naming {@code dir} as not writable. */
  public static void assertStartNames(ThrowingCallable start, Path dir) {
    assertThatThrownBy(start)
        .isInstanceOf(EmbeddedServerException.class)
        .hasMessageContaining(dir.toString())
        .hasMessageContaining("not writable");
  }
}
