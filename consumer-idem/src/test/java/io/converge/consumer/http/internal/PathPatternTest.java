package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * Every case runs on both implementations: Spring's parser (spring-web is on the test class path, so
 * {@link PathPattern#compile} takes it) and the portable one, which must agree with it.
 */
class PathPatternTest {

  private static List<PathPattern> both(String pattern) {
    PathPattern spring = PathPattern.compile(pattern);
    assertThat(spring).isInstanceOf(SpringPathPattern.class);
    return List.of(spring, PathPattern.portable(pattern));
  }

  /** A raw path's segments as Spring MVC reads them: split on '/', decoded, empty ones kept. */
  private static List<String> segments(String rawPath) {
    return Stream.of(rawPath.substring(1).split("/", -1))
        .map(s -> URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8)).toList();
  }

  /** One row a request path: the pattern, the path, whether it matches. */
  @ParameterizedTest(name = "{0} ~ {1}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      # literal segments and single-segment wildcards
      /orders/{id}/refunds | /orders/42/refunds   | true
      /orders/{id}/refunds | /orders/42/refunds/  | true
      /orders/{id}/refunds | /orders/refunds      | false
      /orders/{id}/refunds | /orders/4/2/refunds  | false
      /orders/*            | /orders/1            | true
      /orders/*            | /orders              | false
      /orders              | /orders/1            | false
      # a double star matches any number of segments
      /orders/**           | /orders              | true
      /orders/**           | /orders/1/items/2    | true
      /orders/**           | /ordersx             | false
      /**/pay              | /a/b/pay             | true
      /**/pay              | /a/b/payx            | false
      # a star inside a segment, and regex characters are literal
      /files/*.json        | /files/a.json        | true
      /files/*.json        | /files/ajson         | false
      /v1.0/pay            | /v1x0/pay            | false
      """)
  void matchesARequestPath(String pattern, String path, boolean matches) {
    for (PathPattern p : both(pattern)) {
      assertThat(p.matches(path)).as(p.getClass().getSimpleName()).isEqualTo(matches);
    }
  }

  /** A decoded segment is one segment whatever it holds: the pattern, the segments split on '/', the answer. */
  @ParameterizedTest(name = "{0} ~ {1}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      /orders/{id}/refunds | orders/a%2Fb/refunds | true
      /orders/{id}/refunds | orders/%0A/refunds   | true
      /orders/{id}/refunds | orders/../refunds    | true
      /ord*                | ord%0Aers            | true
      /orders/{id}/refunds | orders/refunds       | false
      /orders/{id}/refunds | orders/a%3Bb/refunds | true
      /a/{x}               | a/%C3%A9%25          | true
      """)
  void aDecodedSegmentIsOneSegmentWhateverItHolds(String pattern, String segments, boolean matches) {
    List<String> decoded = List.of(segments.split("/")).stream()
        .map(s -> URLDecoder.decode(s, StandardCharsets.UTF_8)).toList();
    for (PathPattern p : both(pattern)) {
      assertThat(p.matches(decoded)).as(p.getClass().getSimpleName()).isEqualTo(matches);
    }
  }

  /**
   * Issue 31.5: Spring MVC's whole syntax, on the segments Spring MVC matches (empty ones kept). Spring's own
   * {@code PathPattern} on the raw path gives the same answer, so the wrapper's re-encoding loses nothing.
   */
  @ParameterizedTest(name = "{0} ~ {1}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      # a custom method: a variable and a literal in one segment
      /c/{id}:refund     | /c/12:refund   | true
      /c/{id}:refund     | /c/:refund     | true
      /c/{id}:refund     | /c/12:refundx  | false
      /c/{id}:refund     | /c/12          | false
      /c/{id}:refund     | /c/1/2:refund  | false
      /a/{b}-{c}         | /a/x-y         | true
      /a/{b}-{c}         | /a/-           | true
      /a/*{x}            | /a/y           | true
      /a{b}              | /ac            | true
      # the rest of the path, captured or not, at the end or at the start
      /a/{*x}            | /a             | true
      /a/{*x}            | /a/            | true
      /a/{*x}            | /a/x/y         | true
      /a/{*x}            | /a//           | true
      /a/{*x}            | /ab            | false
      /a/**              | /a             | true
      /a/**              | /a/            | true
      /a/**              | /a/x/y         | true
      /a/**              | /a/%2F         | true
      /a/**              | /ab            | false
      /a//**             | /a/            | true
      /a//**             | /a             | false
      /{*x}              | /              | true
      /**                | /              | true
      /**                | /a             | true
      /{*x}/b            | /b             | true
      /{*x}/b            | /a/b           | true
      /{*x}/b            | //b            | true
      /**/pay            | /pay           | true
      /**/pay            | //pay          | true
      /**/pay            | /a/b/payx      | false
      /**/               | /a/            | true
      /**/               | /a             | false
      # regex variables
      /a/{x:[0-9]+}      | /a/12          | true
      /a/{x:[0-9]+}      | /a/x           | false
      /a/{x:[a-z]{2}}    | /a/ab          | true
      /a/{x:[a-z]{2}}    | /a/abc         | false
      /a/{x:[ab]}        | /a/ab          | false
      /a/{x:.+}          | /a/%0A         | true
      /a/{x:[0-9]+}.json | /a/12.json     | true
      /a/{x:[0-9]+}.json | /a/x.json      | false
      /a/{x}             | /a/x           | true
      /a/{}              | /a/x           | true
      # ? is one character
      /a/?               | /a/x           | true
      /a/?               | /a/xy          | false
      /a/?               | /a/            | false
      /a/?               | /a/%0A         | true
      /a/?               | /a/%C3%A9      | true
      /a/v1.?            | /a/v1.x        | true
      /a/v1.?            | /a/v1xx        | false
      /a/ab?             | /a/ab          | false
      # an empty segment: only a last '*' (or a regex without variables that matches nothing) takes an empty last one
      /a/*               | /a/            | true
      /a/*               | /a             | false
      /a/*               | /a//           | false
      /a/*               | /a/x/          | false
      /*                 | /              | true
      /a/{id}            | /a/            | false
      /a/{id:.*}         | /a/            | false
      /a/*.json          | /a/            | false
      /a/***             | /a/            | true
      /a/***/b           | /a//b          | false
      /a/*/b             | /a//b          | false
      /a/*/**            | /a/            | false
      /a/{x}/**          | /a/x/          | true
      /a/*/              | /a/x/          | true
      /a/*/              | /a/x           | false
      /a/                | /a/            | true
      /a/                | /a             | false
      //a                | //a            | true
      //a                | /a             | false
      /                  | /              | true
      # literals: case, escapes, decoded values
      /A                 | /a             | false
      /a/%2F             | /a/%2F         | false
      /a/%2F             | /a/%252F       | true
      /a/x*y             | /a/x%0Ay       | true
      /a/x+y             | /a/x+y         | true
      /a/;               | /a/%3B         | true
      /a/é               | /a/%C3%A9      | true
      """)
  void readsSpringMvcsSyntaxAsSpringMvcDoes(String pattern, String rawPath, boolean matches) {
    assertThat(PathPatternParser.defaultInstance.parse(pattern).matches(PathContainer.parsePath(rawPath)))
        .as("Spring MVC").isEqualTo(matches);
    for (PathPattern p : both(pattern)) {
      assertThat(p.matches(segments(rawPath))).as(p.getClass().getSimpleName()).isEqualTo(matches);
    }
  }

  /**
   * Issue 31.5: what Spring's parser refuses, both refuse, naming the pattern; a {@code **} in the middle was matched
   * as any number of segments before and is refused now, as Spring MVC refuses it.
   */
  @ParameterizedTest
  @ValueSource(strings = {"/a/**/b", "/a/{*x}/b", "/a/**/**", "/**/b/**", "/a/{*x}/**", "/a{*x}", "/a/{*x}b",
      "/a/{id", "/a/id}", "/a/{x}/{x}", "/a/{x}{x}", "/a/{x:}", "/a/{-x}", "/a/{x*y}", "/a/{x:(}", "/a/{*x:y}",
      "/a/{x{y}}", "/a/{x:[0-9]/b}", "/a/{x}-{x:[0-9]+}"})
  void refusesWhatSpringMvcRefusesNamingThePattern(String pattern) {
    assertThatThrownBy(() -> PathPatternParser.defaultInstance.parse(pattern)).as("Spring MVC")
        .isInstanceOf(PatternParseException.class);
    assertThatThrownBy(() -> PathPattern.compile(pattern)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("path pattern '" + pattern + "' cannot be compiled (Spring MVC's syntax): ");
    assertThatThrownBy(() -> PathPattern.portable(pattern)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("path pattern '" + pattern + "' cannot be compiled (Spring MVC's syntax): ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"orders", ""})
  void aPatternStartsWithASlash(String pattern) {
    assertThatThrownBy(() -> PathPattern.compile(pattern)).hasMessageContaining("a pattern starts with /");
    assertThatThrownBy(() -> PathPattern.portable(pattern)).hasMessageContaining("a pattern starts with /");
  }
}
