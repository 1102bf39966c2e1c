package io.converge.examples.order;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;

/** {@code Prefer: wait=N} parsed as RFC 7240 asks (capped, bad values ignored), and the status of each outcome. */
class PreferWaitTest {

  @Test
  void theWaitIsReadFromAnyPreferenceCappedAndIgnoredWhenMalformed() {
    assertThat(PreferWait.parse(List.of("wait=3"))).contains(Duration.ofSeconds(3));
    assertThat(PreferWait.parse(List.of("respond-async, WAIT = 5"))).contains(Duration.ofSeconds(5));
    assertThat(PreferWait.parse(List.of("return=minimal", "wait=\"2\"; foo=bar"))).contains(Duration.ofSeconds(2));
    assertThat(PreferWait.parse(List.of("wait=0"))).contains(Duration.ZERO);
    assertThat(PreferWait.parse(List.of("wait=600"))).as("capped").contains(PreferWait.MAX);
    assertThat(PreferWait.parse(List.of("wait=99999999999999"))).as("too long to be a number: ignored").isEmpty();
    assertThat(PreferWait.parse(List.of("wait=-1"))).isEmpty();
    assertThat(PreferWait.parse(List.of("wait=1.5"))).isEmpty();
    assertThat(PreferWait.parse(List.of("wait="))).isEmpty();
    assertThat(PreferWait.parse(List.of("wait"))).isEmpty();
    assertThat(PreferWait.parse(List.of("waiting=3"))).isEmpty();
    assertThat(PreferWait.parse(List.of("return=minimal"))).isEmpty();
    assertThat(PreferWait.parse(null)).isEmpty();
  }

  @Test
  void eachOutcomeHasItsStatus() {
    assertThat(PreferWait.status(OrderState.PAID, null)).isEqualTo(HttpStatus.CREATED);
    assertThat(PreferWait.status(OrderState.CANCELED, "payment: insufficient funds"))
        .isEqualTo(HttpStatus.PAYMENT_REQUIRED);
    assertThat(PreferWait.status(OrderState.CANCELED, "stock: insufficient stock")).isEqualTo(HttpStatus.CONFLICT);
    assertThat(PreferWait.status(OrderState.CREATED, null)).isEqualTo(HttpStatus.ACCEPTED);
  }
}
