package io.converge.pulsar;

import io.converge.core.internal.OptionalDependency;
import io.converge.core.internal.Require;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.TxnBackend;
import io.converge.pulsar.internal.PulsarTxnBackend;
import io.converge.pulsar.internal.PulsarSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * The Pulsar-transactions backend of {@link io.converge.producer.TxnProducer}: a unit of work opens a
 * Pulsar transaction, sends its messages in it and records the transaction id and the messages in
 * {@code converge_pulsar_txn} inside the DB transaction; the Pulsar transaction is committed after the
 * DB commit (aborted on rollback). A recovery scan, run by every instance of the producer group,
 * commits by id the logged transactions a dead instance left open, or re-publishes their messages
 * (same ids: receivers deduplicate) when the broker may have aborted them on timeout. Immutable
 * settings; thread-safe.
 *
 * <p>The database needs the migrations of modules {@code producer} and {@code pulsar}
 * ({@code Migrations.apply(ds, "pulsar")}). Needs {@code org.apache.pulsar:pulsar-client}.
 */
public final class PulsarBackend implements BackendFactory {

  private final PulsarSettings settings;

  private PulsarBackend(PulsarSettings settings) {
    this.settings = settings;
  }

  /**
   * The backend on the Pulsar cluster of {@code serviceUrl} ({@code pulsar://host:port}), with a
   * transaction timeout of the producer's local-transaction timeout plus the commit margin (35 s with
   * the defaults), a commit margin of 5 s, a send timeout of 3 s, a recovery scan every 5 s and 10
   * recovery attempts before a refused transaction is parked.
   */
  public static PulsarBackend serviceUrl(String serviceUrl) {
    PulsarSettings.checkServiceUrl("pulsar.serviceUrl", serviceUrl);
    return new PulsarBackend(new PulsarSettings(serviceUrl, null, Duration.ofSeconds(5),
        Duration.ofSeconds(3), Duration.ofSeconds(5), null, 10));
  }

  /**
   * How long the broker keeps a Pulsar transaction open before it aborts it; default the producer's
   * local-transaction timeout plus the commit margin (the shortest that works: an open transaction
   * holds back the consumers of its partitions). Must be at least that (checked at build).
   */
  public PulsarBackend transactionTimeout(Duration timeout) {
    positive("pulsar.transactionTimeout", timeout, Duration.ofSeconds(1));
    return new PulsarBackend(settings.withTransactionTimeout(timeout));
  }

  /**
   * A unit of work whose Pulsar transaction has less than this left before its deadline is refused
   * ({@code LateCommitFencedException}) instead of committing; recovery treats a transaction not found
   * this long before its deadline as committed. Default 5 s.
   */
  public PulsarBackend commitMargin(Duration margin) {
    positive("pulsar.commitMargin", margin, Duration.ofMillis(100));
    return new PulsarBackend(settings.withCommitMargin(margin));
  }

  /** How long opening a transaction, one send or one commit may take; default 3 s. */
  public PulsarBackend sendTimeout(Duration timeout) {
    positive("pulsar.sendTimeout", timeout, Duration.ofMillis(100));
    return new PulsarBackend(settings.withSendTimeout(timeout));
  }

  /** How often the recovery scan runs (also once at start); default 5 s. */
  public PulsarBackend recoveryInterval(Duration interval) {
    positive("pulsar.recoveryInterval", interval, Duration.ofMillis(100));
    return new PulsarBackend(settings.withRecoveryInterval(interval));
  }

  /**
   * How many times recovery tries to re-publish a timed-out transaction that Pulsar refuses (topic
   * terminated or not allowed, message too large, not authorized) before it parks it with the reason
   * (see {@link PulsarTxns}); between attempts it waits the recovery interval, doubled per attempt, at
   * most 5 min. An outage (no answer, timeout) is retried the same way but never parks. Default 10,
   * between 1 and 1000.
   */
  public PulsarBackend recoveryMaxAttempts(int attempts) {
    Require.between("pulsar.recoveryMaxAttempts", attempts, 1, 1000);
    return new PulsarBackend(settings.withRecoveryMaxAttempts(attempts));
  }

  /**
   * Registers, per producer group, the gauges {@code txn.pulsar.open} (logged Pulsar transactions whose
   * commit is not confirmed yet) and {@code txn.pulsar.oldest.age} (seconds since the oldest was
   * logged) and {@code txn.pulsar.parked} (transactions recovery parked), refreshed by each recovery scan. Default: none. Needs {@code io.micrometer:micrometer-core}.
   */
  public PulsarBackend meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
    Objects.requireNonNull(registry, "pulsar.meterRegistry");
    return new PulsarBackend(settings.withMeterRegistry(registry));
  }

  private static void positive(String name, Duration d, Duration min) {
    Require.atLeast(name, d, min, String.valueOf(min));
  }

  @Override
  public String name() {
    return "pulsar";
  }

  @Override
  public TxnBackend create(BackendContext context) {
    Objects.requireNonNull(context, "context");
    OptionalDependency.require("The Pulsar backend", "org.apache.pulsar:pulsar-client", "4.2.4", PulsarBackend.class,
        "org.apache.pulsar.client.api.PulsarClient");
    checkMarginCoversSend();
    return new PulsarTxnBackend(context,
        settings.withTransactionTimeout(transactionTimeoutFor(context.localTransactionTimeout())));
  }

  /**
   * The Pulsar commit is sent after the DB commit and may take the send timeout: a margin shorter than
   * that lets it arrive after the broker aborted the transaction on its deadline, and recovery would
   * then take the "not found" of an aborted transaction for a committed one.
   */
  void checkMarginCoversSend() {
    Require.atLeast("pulsar.commitMargin", settings.commitMargin(), settings.sendTimeout(),
        "pulsar.sendTimeout (" + settings.sendTimeout() + ")");
  }

  /** The Pulsar transaction timeout for a producer whose local-transaction timeout is {@code local}. */
  Duration transactionTimeoutFor(Duration local) {
    Duration needed = local.plus(settings.commitMargin());
    if (settings.transactionTimeout() == null) {
      return needed;
    }
    return Require.atLeast("pulsar.transactionTimeout", settings.transactionTimeout(), needed,
        "the local-transaction timeout plus pulsar.commitMargin (" + needed + ")");
  }

  @Override
  public String toString() {
    return "PulsarBackend" + settings;
  }
}
