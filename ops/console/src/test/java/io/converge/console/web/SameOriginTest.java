package io.converge.console.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A page of another site cannot drive the console: DNS rebinding (a foreign Host) and cross-site POSTs. */
class SameOriginTest {

  @Test
  void aLoopbackConsoleServesLoopbackHostsOnly() {
    assertThat(SameOrigin.refusal("GET", "127.0.0.1:8089", null, null, true)).isNull();
    assertThat(SameOrigin.refusal("GET", "localhost:8089", null, null, true)).isNull();
    assertThat(SameOrigin.refusal("GET", "[::1]:8089", null, null, true)).isNull();
    assertThat(SameOrigin.refusal("GET", "evil.example:8089", null, null, true)).contains("Host 'evil.example:8089'");
    assertThat(SameOrigin.refusal("GET", "evil.example:8089", null, null, false)).isNull();
  }

  @Test
  void anActionFromAnotherSiteOrOriginIsRefused() {
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", "http://127.0.0.1:8089", "same-origin", true)).isNull();
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", null, null, true)).as("not a browser").isNull();
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", null, "cross-site", true)).contains("cross-site");
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", "http://evil.example", null, true))
        .contains("Origin http://evil.example");
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", "null", "same-origin", true))
        .as("the console's own no-referrer form").isNull();
    assertThat(SameOrigin.refusal("POST", "127.0.0.1:8089", "null", "cross-site", true)).isNotNull();
    assertThat(SameOrigin.refusal("GET", "127.0.0.1:8089", "http://evil.example", "cross-site", true))
        .as("a GET never acts").isNull();
  }
}
