package io.converge.pulsar;

import io.converge.core.internal.OptionalDependency;
import io.converge.core.internal.Require;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.TxnBackend;
import io.converge.pulsar.internal.BrokerWait;
import io.converge.pulsar.internal.PulsarTxnBackend;
import io.converge.pulsar.internal.PulsarSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * The Pulsar-transactions backend of {@link io.converge.producer.TxnProducer}: a unit of work opens a
 * Pulsar transaction, sends its messages in it and records the transaction id and the messages in one row of
 * {@code converge_pulsar_unit} inside the DB transaction; the Pulsar transaction is committed after the
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
   * The backend on the Pulsar cluster of {@code serviceUrl} ({@code pulsar://host:port}) with the defaults of
   * {@link Builder}: {@code builder(serviceUrl).build()}.
   *
   * @throws IllegalArgumentException quoting {@code serviceUrl} when it is not a Pulsar service URL
   */
  public static PulsarBackend serviceUrl(String serviceUrl) {
    return builder(serviceUrl).build();
  }

  /**
   * A builder of the backend on the Pulsar cluster of {@code serviceUrl} ({@code pulsar://host:port}); every
   * setting is validated in {@link Builder#build()}.
   */
  public static Builder builder(String serviceUrl) {
    return new Builder(serviceUrl);
  }

  /**
   * This backend with a transaction timeout of {@code timeout}.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#transactionTimeout(Duration)}
   */
  @Deprecated
  public PulsarBackend transactionTimeout(Duration timeout) {
    return toBuilder().transactionTimeout(timeout).build(false);
  }

  /**
   * This backend with a commit margin of {@code margin}.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#commitMargin(Duration)}
   */
  @Deprecated
  public PulsarBackend commitMargin(Duration margin) {
    return toBuilder().commitMargin(margin).build(false);
  }

  /**
   * This backend with a send timeout of {@code timeout}.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#sendTimeout(Duration)}
   */
  @Deprecated
  public PulsarBackend sendTimeout(Duration timeout) {
    return toBuilder().sendTimeout(timeout).build(false);
  }

  /**
   * This backend with a recovery scan every {@code interval}.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#recoveryInterval(Duration)}
   */
  @Deprecated
  public PulsarBackend recoveryInterval(Duration interval) {
    return toBuilder().recoveryInterval(interval).build(false);
  }

  /**
   * This backend with {@code attempts} recovery attempts before a refused transaction is parked.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#recoveryMaxAttempts(int)}
   */
  @Deprecated
  public PulsarBackend recoveryMaxAttempts(int attempts) {
    return toBuilder().recoveryMaxAttempts(attempts).build(false);
  }

  /**
   * This backend with gauges registered in {@code registry}.
   *
   * @deprecated use {@link #builder(String)} and {@link Builder#meterRegistry}
   */
  @Deprecated
  public PulsarBackend meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
    return toBuilder().meterRegistry(registry).build(false);
  }

  private Builder toBuilder() {
    Builder b = new Builder(settings.serviceUrl());
    b.transactionTimeout = settings.transactionTimeout();
    b.commitMargin = settings.commitMargin();
    b.sendTimeout = settings.sendTimeout();
    b.recoveryInterval = settings.recoveryInterval();
    b.meterRegistry = settings.meterRegistry();
    b.recoveryMaxAttempts = settings.recoveryMaxAttempts();
    b.startupWait = settings.startupWait();
    return b;
  }

  /** Builds a {@link PulsarBackend}; defaults are applied and every setting validated in {@link #build()}. Not thread-safe. */
  public static final class Builder {

    private final String serviceUrl;
    private Duration transactionTimeout;
    private Duration commitMargin = Duration.ofSeconds(5);
    private Duration sendTimeout = Duration.ofSeconds(3);
    private Duration recoveryInterval = Duration.ofSeconds(5);
    private Object meterRegistry;
    private int recoveryMaxAttempts = 10;
    private Duration startupWait = BrokerWait.DEFAULT_LIMIT;

    private Builder(String serviceUrl) {
      this.serviceUrl = serviceUrl;
    }

    /**
     * How long the broker keeps a Pulsar transaction open before it aborts it, at least 1 s; default the producer's
     * local-transaction timeout plus the commit margin (the shortest that works: an open transaction holds back the
     * consumers of its partitions). Must be at least that (checked when the producer is built).
     */
    public Builder transactionTimeout(Duration timeout) {
      this.transactionTimeout = timeout;
      return this;
    }

    /**
     * A unit of work whose Pulsar transaction has less than this left before its deadline is refused
     * ({@code LateCommitFencedException}) instead of committing; recovery treats a transaction not found this long
     * before its deadline as committed. At least 100 ms and at least the send timeout; default 5 s.
     */
    public Builder commitMargin(Duration margin) {
      this.commitMargin = margin;
      return this;
    }

    /** How long opening a transaction, one send or one commit may take, at least 100 ms; default 3 s. */
    public Builder sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /** How often the recovery scan runs (also once at start), at least 100 ms; default 5 s. */
    public Builder recoveryInterval(Duration interval) {
      this.recoveryInterval = interval;
      return this;
    }

    /**
     * How many times recovery tries to re-publish a timed-out transaction that Pulsar refuses (topic terminated or
     * not allowed, message too large, not authorized) before it parks it with the reason (see {@link PulsarTxns});
     * between attempts it waits the recovery interval, doubled per attempt, at most 5 min. An outage (no answer,
     * timeout) is retried the same way but never parks. Default 10, between 1 and 1000.
     */
    public Builder recoveryMaxAttempts(int attempts) {
      this.recoveryMaxAttempts = attempts;
      return this;
    }

    /**
     * How long the start of the producer ({@link PulsarBackend#create}) waits for a Pulsar that is unavailable (connection refused
     * or timed out, lookup timeout, transaction coordinator not ready): it tries again with backoff (0.5 s doubling up
     * to 5 s), each attempt logged at WARN, then fails with a {@code BrokerUnavailableException} naming this limit; a
     * bad URL or an authorization error fails at once. {@code 0}: one attempt, as before. Between 0 and 1 h;
     * default 60 s, as the database's start-up wait. Spring: {@code converge.startup.broker-wait}.
     */
    public Builder startupWait(Duration wait) {
      this.startupWait = wait;
      return this;
    }

    /**
     * Registers, per producer group, the gauges {@code txn.pulsar.open} (logged Pulsar transactions whose commit is
     * not confirmed yet), {@code txn.pulsar.oldest.age} (seconds since the oldest was logged) and
     * {@code txn.pulsar.parked} (transactions recovery parked), refreshed by each recovery scan. Default: none.
     * Needs {@code io.micrometer:micrometer-core}.
     */
    public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
      this.meterRegistry = Objects.requireNonNull(registry, "pulsar.meterRegistry");
      return this;
    }

    /**
     * Validates the settings and returns the backend.
     *
     * @throws IllegalArgumentException naming the setting and quoting its bad value
     */
    public PulsarBackend build() {
      return build(true);
    }

    /** {@code acrossSettings}: also the rules between settings (the deprecated one-setting copies leave them to create). */
    private PulsarBackend build(boolean acrossSettings) {
      PulsarSettings.checkServiceUrl("pulsar.serviceUrl", serviceUrl);
      if (transactionTimeout != null) {
        atLeast("pulsar.transactionTimeout", transactionTimeout, Duration.ofSeconds(1));
      }
      atLeast("pulsar.commitMargin", commitMargin, Duration.ofMillis(100));
      atLeast("pulsar.sendTimeout", sendTimeout, Duration.ofMillis(100));
      atLeast("pulsar.recoveryInterval", recoveryInterval, Duration.ofMillis(100));
      Require.between("pulsar.recoveryMaxAttempts", recoveryMaxAttempts, 1, 1000);
      BrokerWait.check(BrokerWait.SETTING, startupWait);
      PulsarBackend backend = new PulsarBackend(new PulsarSettings(serviceUrl, transactionTimeout, commitMargin,
          sendTimeout, recoveryInterval, meterRegistry, recoveryMaxAttempts, startupWait));
      if (acrossSettings) {
        backend.checkMarginCoversSend();
      }
      return backend;
    }

    private static void atLeast(String name, Duration d, Duration min) {
      Require.atLeast(name, d, min, String.valueOf(min));
    }
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
