package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.ConvergeException;
import org.junit.jupiter.api.Test;

class OptionalDependencyTest {

  @Test
  void aMissingLibraryFailsNamingTheArtifactAndVersion() {
    assertThatThrownBy(() -> OptionalDependency.require("The Foo backend", "com.example:foo-client", "1.2.3",
        OptionalDependencyTest.class, "com.example.NoSuchClient"))
        .isInstanceOf(ConvergeException.class)
        .hasMessage(
            "The Foo backend needs com.example:foo-client on the classpath (add it as a dependency, version 1.2.3)")
        .hasCauseInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void aPresentLibraryPasses() {
    assertThatCode(() -> OptionalDependency.require("The JDBC backend", "java.sql", "17",
        OptionalDependencyTest.class, "java.sql.Connection")).doesNotThrowAnyException();
  }
}
