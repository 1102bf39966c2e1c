package io.converge.examples.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/** The reconciliation of one run; {@link #consistent()} is false when any invariant failed. */
public record Report(Backend backend, OrderTraffic.Result traffic, PaymentTraffic.Result payments,
    CallbackTraffic.Result callbacks, long orders,
    long paid,
    long canceledForStock, long canceledForPayment, long canceledByTimeout, long open, long paidCents,
    long debitedCents,
    long compensations, long notifications, int duplicatesInjected, long duplicatesAbsorbed, Http.Counts client,
    long parkedOrTickets, long stored5xx, Duration took, Tcc tcc, List<String> violations) {

  /**
   * The TCC debit's barrier rows in the account service ({@code converge_tcc_barrier}; all zero when the debit is no
   * TCC branch: the choreographed flow, or {@code examples.saga.debit=saga}).
   *
   * @param tried Tries that ran (froze)
   * @param confirmed Confirms that ran (debited the frozen amount)
   * @param cancelled Cancels that ran (unfroze)
   * @param emptyRollbacks Cancels that arrived before their Try (nothing to unfreeze)
   * @param hangingRefused Tries refused because their Cancel came first
   */
  public record Tcc(long tried, long confirmed, long cancelled, long emptyRollbacks, long hangingRefused) {
  }

  /** Whether every invariant held. */
  public boolean consistent() {
    return violations.isEmpty();
  }

  private static String yes(boolean b) {
    return b ? "yes" : "NO";
  }

  /** Prints the reconciliation. */
  public void print(PrintStream out) {
    out.println();
    out.printf("Reconciliation, backend %s (%d s)%n", backend.mode(), took.toSeconds());
    out.printf("  orders requested (Idempotency-Keys)   %7d%n", traffic.keys());
    out.printf("  orders stored                         %7d%n", orders);
    out.printf("  orders paid                           %7d%n", paid);
    out.printf("  orders canceled: no stock             %7d%n", canceledForStock);
    out.printf("  orders canceled: payment refused      %7d   (each compensated: stock released)%n",
        canceledForPayment);
    if (canceledByTimeout > 0) {
      out.printf("  orders canceled: saga timed out       %7d   (its global timeout passed; compensated)%n",
          canceledByTimeout);
    }
    out.printf("  orders still open                     %7d%n", open);
    out.printf("  compensations run (stock released)    %7d%n", compensations);
    out.printf("  money debited (cents)                 %7d%n", debitedCents);
    out.printf("  sum of paid orders (cents)            %7d%n", paidCents);
    out.printf("  notifications                         %7d%n", notifications);
    if (tcc.tried() + tcc.emptyRollbacks() > 0) {
      out.printf("  TCC debit: tried/confirmed/cancelled  %7d / %d / %d   empty rollbacks: %d, hanging refused: %d%n",
          tcc.tried(), tcc.confirmed(), tcc.cancelled(), tcc.emptyRollbacks(), tcc.hangingRefused());
    }
    out.printf("  HTTP retries, same key                %7d   replayed: %d%n", traffic.retries(),
        traffic.retriesReplayed());
    out.printf("  HTTP bursts of 3, same key            %7d   409 in progress: %d%n", traffic.concurrentBursts(),
        traffic.inProgress409());
    out.printf("  same key, other body -> 422           %7d%n", traffic.mismatch422());
    out.printf("  answer-lost, order found by its key   %7d%n", traffic.answerLostLookups());
    out.printf("  Prefer: wait, 201/402/409/202         %7d   %s%n", traffic.waited().size(),
        traffic.waited().values().stream().collect(java.util.stream.Collectors.groupingBy(st -> st,
            java.util.TreeMap::new, java.util.stream.Collectors.counting())));
    out.printf("  client retries (timeout/409/503/conn) %7d   gave up: %d%n", client.retries(), client.gaveUp());
    out.printf("  dead letters + tickets                %7d%n", parkedOrTickets);
    out.printf("  stored 5xx Idempotency-Key answers    %7d%n", stored5xx);
    out.printf("  duplicate deliveries injected         %7d%n", duplicatesInjected);
    out.printf("  duplicates absorbed by consumers      %7d   (injected + the brokers' own)%n", duplicatesAbsorbed);
    out.printf("  charges / retried, same answer        %7d / %d%n", payments.charges(), payments.retriesSame());
    out.printf("  out_trade_no reused -> 400 + first    %7d%n", payments.reuse400());
    out.printf("  refunds / retried, same answer        %7d / %d   second refund -> 409: %d%n", payments.refunds(),
        payments.refundRetriesSame(), payments.secondRefund409());
    if (callbacks.chargeId() != null) {
      out.printf("  signed provider callbacks               valid applied once: %s, forged -> 401: %s, stale -> 400:"
          + " %s, copy -> first answer: %s%n", yes(callbacks.validApplied()), yes(callbacks.forged401()),
          yes(callbacks.stale400()), yes(callbacks.replayedFirst()));
    }
    if (violations.isEmpty()) {
      out.println("  all invariants hold");
    } else {
      violations.forEach(v -> out.println("  " + v));
    }
  }
}
