package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PathPatternTest {

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
    assertThat(PathPattern.compile(pattern).matches(path)).isEqualTo(matches);
  }

  /** A decoded segment is one segment whatever it holds: the pattern, the segments split on '/', the answer. */
  @ParameterizedTest(name = "{0} ~ {1}: {2}")
  @CsvSource(delimiter = '|', textBlock = """
      /orders/{id}/refunds | orders/a%2Fb/refunds | true
      /orders/{id}/refunds | orders/%0A/refunds   | true
      /orders/{id}/refunds | orders/../refunds    | true
      /ord*                | ord%0Aers            | true
      /orders/{id}/refunds | orders/refunds       | false
      """)
  void aDecodedSegmentIsOneSegmentWhateverItHolds(String pattern, String segments, boolean matches) {
    List<String> decoded = List.of(segments.split("/")).stream()
        .map(s -> java.net.URLDecoder.decode(s, java.nio.charset.StandardCharsets.UTF_8)).toList();
    assertThat(PathPattern.compile(pattern).matches(decoded)).isEqualTo(matches);
  }
}
