package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PathPatternTest {

  @Test
  void literalSegmentsAndSingleSegmentWildcards() {
    PathPattern p = PathPattern.compile("/orders/{id}/refunds");
    assertThat(p.matches("/orders/42/refunds")).isTrue();
    assertThat(p.matches("/orders/42/refunds/")).isTrue();
    assertThat(p.matches("/orders/refunds")).isFalse();
    assertThat(p.matches("/orders/4/2/refunds")).isFalse();
    assertThat(PathPattern.compile("/orders/*").matches("/orders/1")).isTrue();
    assertThat(PathPattern.compile("/orders/*").matches("/orders")).isFalse();
    assertThat(PathPattern.compile("/orders").matches("/orders/1")).isFalse();
  }

  @Test
  void doubleStarMatchesAnyNumberOfSegments() {
    PathPattern p = PathPattern.compile("/orders/**");
    assertThat(p.matches("/orders")).isTrue();
    assertThat(p.matches("/orders/1/items/2")).isTrue();
    assertThat(p.matches("/ordersx")).isFalse();
    assertThat(PathPattern.compile("/**/pay").matches("/a/b/pay")).isTrue();
    assertThat(PathPattern.compile("/**/pay").matches("/a/b/payx")).isFalse();
  }

  @Test
  void starInsideASegmentAndRegexCharactersAreLiteral() {
    assertThat(PathPattern.compile("/files/*.json").matches("/files/a.json")).isTrue();
    assertThat(PathPattern.compile("/files/*.json").matches("/files/ajson")).isFalse();
    assertThat(PathPattern.compile("/v1.0/pay").matches("/v1x0/pay")).isFalse();
  }

  @Test
  void aDecodedSegmentIsOneSegmentWhateverItHolds() {
    PathPattern p = PathPattern.compile("/orders/{id}/refunds");
    assertThat(p.matches(java.util.List.of("orders", "a/b", "refunds"))).isTrue();
    assertThat(p.matches(java.util.List.of("orders", "\n", "refunds"))).isTrue();
    assertThat(p.matches(java.util.List.of("orders", "..", "refunds"))).isTrue();
    assertThat(PathPattern.compile("/ord*").matches(java.util.List.of("ord\ners"))).isTrue();
    assertThat(p.matches(java.util.List.of("orders", "refunds"))).isFalse();
  }
}
