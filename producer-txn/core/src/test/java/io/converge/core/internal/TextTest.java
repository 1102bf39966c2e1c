package io.converge.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TextTest {

  @Test
  void printableEscapesAndCutsByCharacters() {
    assertThat(Text.printable("abc", 3)).isEqualTo("abc");
    assertThat(Text.printable("abcd", 3)).isEqualTo("ab…");
    assertThat(Text.printable("\u0000", 6)).isEqualTo("\\u0000");
    assertThat(Text.printable("\u0000", 5)).isEqualTo("…");
    assertThat(Text.printable("a\nb\\", 10)).isEqualTo("a\\u000ab\\\\");
    assertThat(Text.printable("\uD83D\uDCB3\uD83D\uDCB3\uD83D\uDCB3", 2)).isEqualTo("\uD83D\uDCB3…");
    assertThat(Text.printable("\uD83D", 6)).as("an unpaired surrogate").isEqualTo("\\ud83d");
    assertThat(Text.quoted("x\ty", 20)).isEqualTo("'x\\u0009y'");
  }

  @Test
  void abbreviateKeepsLinesEscapesNulAndNeverSplitsAPair() {
    assertThat(Text.abbreviate("a\nb", 10)).isEqualTo("a\nb");
    assertThat(Text.abbreviate("a\u0000b", 10)).isEqualTo("a\\u0000b");
    assertThat(Text.abbreviate("abcdef", 4)).isEqualTo("abc…");
    assertThat(Text.abbreviate("ab\uD83D\uDCB3cd", 4)).isEqualTo("ab…");
  }
}
