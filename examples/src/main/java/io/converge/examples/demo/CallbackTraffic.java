package io.converge.examples.demo;

import io.converge.consumer.http.SignedCallbackFilter;
import io.converge.examples.payment.ProviderCallbacks;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The payment provider's callbacks to the payment API (issue 34.3): for one new charge, a valid signed callback
 * ("confirmed"), a forged one ("failed", signed with a guessed secret), a stale one ("failed", signed with the real
 * secret ten minutes ago) and a copy of the valid one. Five requests.
 *
 * @param http the payment service
 * @param run this run's prefix of the {@code out_trade_no} and event ids
 */
record CallbackTraffic(Http http, String run) {

  /** The header the payment service's filter reads. */
  static final String SIGNATURE_HEADER = "Converge-Signature";

  /**
   * What the provider saw.
   *
   * @param chargeId the charge the callbacks were about; null when none was made (a run without callbacks)
   */
  record Result(String chargeId, boolean validApplied, boolean forged401, boolean stale400, boolean replayedFirst,
      List<String> anomalies) {

    /** No callbacks sent (the saga benchmark). */
    static final Result NONE = new Result(null, false, false, false, false, List.of());
  }

  Result send() throws Exception {
    List<String> anomalies = new ArrayList<>();
    Http.Reply charge = http.post("/charges", Map.of("merchantId", "m-cb", "outTradeNo", run + "-cb", "amountCents",
        4200, "currency", "CNY"), null);
    String chargeId = charge.field("id");
    if (charge.status() != 200 || chargeId == null) {
      anomalies.add("callbacks: the charge answered " + charge.status() + " " + charge.body());
      return new Result(null, false, false, false, false, anomalies);
    }
    String path = "/charges/" + chargeId + "/provider-callback";
    long now = System.currentTimeMillis() / 1000;
    byte[] valid = event(run + "-evt-ok", chargeId, "confirmed");
    byte[] bad = event(run + "-evt-bad", chargeId, "failed");
    String validSignature = sign(ProviderCallbacks.DEMO_SECRET, now, valid);

    Http.Reply first = http.postSigned(path, valid, SIGNATURE_HEADER, validSignature);
    Http.Reply forged = http.postSigned(path, bad, SIGNATURE_HEADER, sign("whsec_guessed", now, bad));
    Http.Reply stale = http.postSigned(path, bad, SIGNATURE_HEADER,
        sign(ProviderCallbacks.DEMO_SECRET, now - 600, bad));
    Http.Reply copy = http.postSigned(path, valid, SIGNATURE_HEADER, validSignature);

    boolean applied = first.status() == 200 && !first.replayed() && "CONFIRMED".equals(first.field("providerStatus"))
        && "1".equals(first.field("callbacksApplied"));
    boolean replayed = copy.status() == 200 && copy.replayed() && copy.body().equals(first.body());
    expect(anomalies, applied, "the valid callback", first);
    expect(anomalies, forged.status() == 401, "the forged callback (401)", forged);
    expect(anomalies, stale.status() == 400, "the stale callback (400)", stale);
    expect(anomalies, replayed, "the copy of the valid callback (its first answer, replayed)", copy);
    return new Result(chargeId, applied, forged.status() == 401, stale.status() == 400, replayed, anomalies);
  }

  private static void expect(List<String> anomalies, boolean holds, String what, Http.Reply reply) {
    if (!holds) {
      anomalies.add("callbacks: " + what + " answered " + reply.status() + (reply.replayed() ? " (replayed) " : " ")
          + reply.body());
    }
  }

  private static byte[] event(String eventId, String chargeId, String outcome) {
    return ("{\"eventId\":\"" + eventId + "\",\"chargeId\":\"" + chargeId + "\",\"outcome\":\"" + outcome + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static String sign(String secret, long unixSeconds, byte[] body) {
    return SignedCallbackFilter.sign(secret.getBytes(StandardCharsets.UTF_8), unixSeconds, body);
  }
}
