package io.converge.console.inspect;

import io.converge.console.internal.Slugs;

/**
 * What can be stuck, one kind per intermediate state Converge records in the database. Each kind has a
 * threshold ({@link StuckThresholds}): an item older than it is stuck.
 */
public enum StuckKind {

  /**
   * RocketMQ: a unit whose END did not reach the broker, waiting for its check-back ({@code converge_txn_end}:
   * the producer records an END it dropped or that failed, and every check-back, off the unit's path), and a
   * half message the check-back could not decide (prepared longer ago than the transaction log's retention, no
   * row): it waits for a person in {@code converge_txn_ticket}. A unit whose producer crashed between its DB
   * commit and its END is seen at its first check-back only.
   */
  ROCKETMQ_UNIT("RocketMQ units",
      "units waiting for their END or check-back, and half messages past the log retention"),
  /**
   * Pulsar: a transaction recorded with its unit, whose Pulsar commit is not confirmed yet
   * ({@code converge_pulsar_unit}, or {@code converge_pulsar_txn} from before pulsar migration V4).
   */
  PULSAR_TXN("Pulsar transactions", "open transactions, not yet confirmed by Pulsar or the recovery scan"),
  /** Pulsar: a transaction recovery parked after Pulsar kept refusing its re-publish. */
  PULSAR_RECOVERY("Pulsar recoveries", "transactions parked by recovery"),
  /** Outbox: an unpublished row, neither parked nor behind a parked row of its key (the relay's lag). */
  OUTBOX_LAG("Outbox lag", "unpublished rows waiting for a relay"),
  /** Outbox: a parked row, the head of a key the broker kept refusing; the key's later rows wait. */
  OUTBOX_PARKED("Outbox parked keys", "parked keys (their later rows wait)"),
  /** Consumers: a parked message in {@code converge_dlq} (with its attempts), or one held behind it. */
  CONSUMER_DLQ("Dead letters", "consumers' parked messages and those held behind them"),
  /** Consumers: an open manual ticket in {@code converge_ticket} (money anomaly, retries exhausted). */
  TICKET("Tickets", "open manual tickets"),
  /** HTTP: an Idempotency-Key in progress, or expired and not yet purged. */
  IDEMPOTENCY_KEY("Idempotency-Keys", "requests in progress, or keys expired and not purged"),
  /** A {@code StateMachine} entity whose latest transition left it in an intermediate (non-final) state. */
  STATE("Entity states", "entities in an intermediate state"),
  /**
   * Sagas ({@code converge_saga}, converge-saga): one running or compensating (its age counted from its start), or
   * one stopped for a person with an open ticket in {@code converge_saga_ticket} (a compensation that failed three
   * times, a money anomaly; its age counted from the ticket), or an open ticket of a saga purged before it (a
   * compensation's SUCCESS after the purge: an ANOMALY ticket with no saga row).
   */
  SAGA("Sagas", "sagas running or compensating, sagas stopped with an open ticket, open tickets of purged sagas"),
  /**
   * TCC ({@code converge_tcc_barrier}, converge-saga): a Try the participant's barrier refused as hanging in the last
   * 24 hours, because its Cancel came first (an empty rollback). Nothing is frozen and nothing waits: it is listed
   * (aged from its last refusal) because it means a Try was delayed past its global transaction's timeout.
   */
  TCC_HANGING("TCC hanging Tries", "Tries refused in the last 24 hours because their Cancel came first");

  private final String title;
  private final String description;

  StuckKind(String title, String description) {
    this.title = title;
    this.description = description;
  }

  /** A short title, e.g. {@code Dead letters}. */
  public String title() {
    return title;
  }

  /** One line: what an item of this kind is. */
  public String description() {
    return description;
  }

  /** The kind's name in URLs and properties: {@code outbox-parked} for {@link #OUTBOX_PARKED}. */
  public String slug() {
    return Slugs.of(this);
  }

  /** The kind of {@code slug} ({@link #slug()} or the enum name, any case). */
  public static StuckKind ofSlug(String slug) {
    return Slugs.parse(StuckKind.class, slug);
  }
}
