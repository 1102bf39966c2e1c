package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The canonical query string of the fingerprint: order of names, escapes and absent queries. */
class RequestReaderTest {

  @Test
  void parametersAreDecodedAndSortedByNameKeepingTheOrderOfOneNamesValues() {
    assertThat(RequestReader.canonicalQuery("b=2&a=1")).isEqualTo(RequestReader.canonicalQuery("a=1&b=%32"));
    assertThat(RequestReader.canonicalQuery("a=1&a=2")).isNotEqualTo(RequestReader.canonicalQuery("a=2&a=1"));
    assertThat(RequestReader.canonicalQuery("amount=5")).isNotEqualTo(RequestReader.canonicalQuery("amount=6"));
    assertThat(RequestReader.canonicalQuery("flag")).isEqualTo(RequestReader.canonicalQuery("flag="));
  }

  @Test
  void noQueryLeavesTheFingerprintAsItWas() {
    assertThat(RequestReader.canonicalQuery(null)).isEmpty();
    assertThat(RequestReader.canonicalQuery("")).isEmpty();
    assertThat(RequestReader.canonicalQuery("&&")).isEmpty();
  }

  @Test
  void aMalformedEscapeIsKeptAsSent() {
    assertThat(RequestReader.canonicalQuery("a=%zz")).isEqualTo("?a\0%zz\n");
    assertThat(RequestReader.canonicalQuery("a=%zz")).isNotEqualTo(RequestReader.canonicalQuery("a=%yy"));
  }
}
