package io.converge.saga.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * OpenTelemetry stays an optional dependency of the saga module (issue 34): no class of it refers to an OpenTelemetry
 * type, so without the API on the classpath none is loaded. It traces only through {@code io.converge.core.tracing}
 * ({@code Tracing}, {@code MessageSpan}), whose own test proves the same without the API
 * ({@code TracingTest.withoutTheApiNothingHappensAndNoOpenTelemetryClassIsLoaded}).
 */
class NoOpenTelemetryTest {

  @Test
  void noClassOfTheSagaModuleRefersToOpenTelemetry() throws Exception {
    Path classes = Path.of(SagaSpans.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Path> all;
    try (Stream<Path> files = Files.walk(classes)) {
      all = files.filter(f -> f.toString().endsWith(".class")).toList();
    }
    assertThat(all).as("the module's classes").hasSizeGreaterThan(50).contains(classes.resolve(
        SagaSpans.class.getName().replace('.', '/') + ".class"));
    for (Path f : all) {
      // a class's constant pool names every type it refers to, in the internal form
      assertThat(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1)).as(classes.relativize(f).toString())
          .doesNotContain("io/opentelemetry");
    }
  }
}
