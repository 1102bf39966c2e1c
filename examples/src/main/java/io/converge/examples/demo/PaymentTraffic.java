package io.converge.examples.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Clients of the payment API: charges sent twice, an {@code out_trade_no} reused with another amount,
 * a refund sent twice and a second refund of a refunded charge (article 2.2 and 4.1).
 *
 * @param http the payment service
 * @param run this run's prefix of the {@code out_trade_no}s
 */
record PaymentTraffic(Http http, String run) {

  /** What the clients saw. */
  record Result(int charges, int retriesSame, int reuse400, int refunds, int refundRetriesSame, int secondRefund409,
      List<String> anomalies) {
  }

  Result run(int charges) throws Exception {
    List<String> anomalies = new ArrayList<>();
    int same = 0;
    int reuse = 0;
    int refunds = 0;
    int refundSame = 0;
    int second = 0;
    for (int j = 0; j < charges; j++) {
      long amount = j % 9 == 4 ? 600_000 : 1000 + j; // above the limit: declined, Failed
      Map<String, Object> body = Map.of("merchantId", "m-1", "outTradeNo", run + "-pay-" + j, "amountCents", amount,
          "currency", "CNY");
      Http.Reply first = http.post("/charges", body, null);
      Http.Reply again = http.post("/charges", body, null);
      if (first.status() == 200 && again.status() == 200 && first.body().equals(again.body())) {
        same++;
      } else {
        anomalies.add("charge " + j + ": " + first.status() + " " + first.body() + " (" + first.wire() + ") then "
            + again.status() + " " + again.body() + " (" + again.wire() + ")");
        continue;
      }
      String chargeId = first.field("id");
      if (j % 4 == 1) {
        Map<String, Object> other = new java.util.HashMap<>(body);
        other.put("amountCents", amount + 1);
        Http.Reply r = http.post("/charges", other, null);
        Object firstId = r.body().get("first") instanceof Map<?, ?> f ? f.get("id") : null;
        if (r.status() == 400 && Objects.equals(chargeId, firstId)) {
          reuse++;
        } else {
          anomalies
              .add("charge " + j + ": out_trade_no reused with another amount answered " + r.status() + " " + r.body());
        }
      }
      if (j % 3 == 0 && "CAPTURED".equals(first.field("state"))) {
        Map<String, Object> refund = Map.of("outRefundNo", run + "-rf-" + j, "amountCents", amount);
        Http.Reply r1 = http.post("/charges/" + chargeId + "/refunds", refund, null);
        Http.Reply r2 = http.post("/charges/" + chargeId + "/refunds", refund, null);
        Http.Reply r3 = http.post("/charges/" + chargeId + "/refunds",
            Map.of("outRefundNo", run + "-rf-" + j + "-again", "amountCents", amount), null);
        refunds++;
        if (r1.status() == 200 && r1.body().equals(r2.body())) {
          refundSame++;
        } else {
          anomalies
              .add("refund " + j + ": " + r1.status() + " " + r1.body() + " (" + r1.wire() + ") then " + r2.status()
                  + " "
                  + r2.body() + " (" + r2.wire() + ")");
        }
        if (r3.status() == 409) {
          second++;
        } else {
          anomalies.add("refund " + j + ": a second refund number answered " + r3.status() + " " + r3.body());
        }
      }
    }
    return new Result(charges, same, reuse, refunds, refundSame, second, anomalies);
  }
}
