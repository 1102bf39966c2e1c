package io.converge.consumer.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
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

  /** Issue 13.11: fields were joined by \\0 and \\n, which a decoded %00 or %0A forges. */
  @Test
  void decodedSeparatorsCannotForgeAnotherRequest() {
    // the old "name\\0value\\n" form of both was "a\\01\\nb\\02\\n"
    assertThat(RequestReader.canonicalQuery("a=1&b=2")).isNotEqualTo(RequestReader.canonicalQuery("a=1%0Ab%002"));
    assertThat(RequestReader.canonicalQuery("a%00b=c")).isNotEqualTo(RequestReader.canonicalQuery("a=b%00c"));
    byte[] none = new byte[0];
    // method, path, query, kind and body were joined by \\n: (/p\\nraw, body "") was (/p, body "raw\\n")
    assertThat(RequestReader.fingerprint("POST", "/p\nraw", "", "raw", none))
        .isNotEqualTo(RequestReader.fingerprint("POST", "/p", "", "raw", "raw\n".getBytes(StandardCharsets.UTF_8)));
    // a decoded '?' in the path was the start of the query
    assertThat(RequestReader.fingerprint("POST", "/p?x", "", "raw", none))
        .isNotEqualTo(RequestReader.fingerprint("POST", "/p", "?x", "raw", none));
    assertThat(RequestReader.fingerprint("POST", "/p", RequestReader.canonicalQuery("x"), "raw", none))
        .isNotEqualTo(RequestReader.fingerprint("POST", "/p?x\0", "", "raw", "\n".getBytes(StandardCharsets.UTF_8)));
    // the same request still has the same fingerprint
    assertThat(RequestReader.fingerprint("POST", "/p", RequestReader.canonicalQuery("b=2&a=1"), "json", none))
        .isEqualTo(RequestReader.fingerprint("POST", "/p", RequestReader.canonicalQuery("a=1&b=2"), "json", none));
  }

  @Test
  void noQueryIsEmpty() {
    assertThat(RequestReader.canonicalQuery(null)).isEmpty();
    assertThat(RequestReader.canonicalQuery("")).isEmpty();
    assertThat(RequestReader.canonicalQuery("&&")).isEmpty();
  }

  @Test
  void aMalformedEscapeIsKeptAsSent() {
    assertThat(RequestReader.canonicalQuery("a=%zz")).isEqualTo(RequestReader.canonicalQuery("a=%25zz"));
    assertThat(RequestReader.canonicalQuery("a=%zz")).isNotEqualTo(RequestReader.canonicalQuery("a=%yy"));
  }
}
