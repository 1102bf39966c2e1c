package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The one JSON string writer and the one parser. */
class JsonTest {

  @Test
  void quotesOneWayKeepingPairsAndEscapingLoneSurrogates() {
    assertThat(quote("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
    assertThat(quote("line\nnul\u0000\u001f")).isEqualTo("\"line\\u000anul\\u0000\\u001f\"");
    assertThat(quote("\uD83D\uDCB3 é")).as("a pair and non-ASCII stay as they are").isEqualTo("\"\uD83D\uDCB3 é\"");
    assertThat(quote("x\uD83Dy\uDCB3")).isEqualTo("\"x\\ud83dy\\udcb3\"");
    assertThat(quote("\uDCB3\uD83D")).as("a low before a high is two lone ones").isEqualTo("\"\\udcb3\\ud83d\"");
  }

  @Test
  void parsesWithJsonWhitespaceAndBoundedNestingAndNumbers() throws IOException {
    try (JsonParser p = Json.parser(" \t\r\n{\"a\": [1, \"b\"]}")) {
      assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
    }
    assertThatThrownBy(() -> readAll("\u001c{}")).as("U+001C is not JSON whitespace").isInstanceOf(IOException.class);
    assertThat(readAll("[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH))).isPositive();
    assertThatThrownBy(() -> readAll("[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1)))
        .isInstanceOf(IOException.class);
    assertThatThrownBy(() -> readAll("[" + "1".repeat(Json.MAX_NUMBER_LENGTH + 1) + "]"))
        .isInstanceOf(IOException.class);
  }

  private static String quote(String s) {
    return Json.quote(new StringBuilder(), s).toString();
  }

  private static int readAll(String json) throws IOException {
    int tokens = 0;
    try (JsonParser p = Json.parser(json)) {
      while (p.nextToken() != null) {
        p.getText(); // numbers are checked when read
        tokens++;
      }
    }
    return tokens;
  }
}
