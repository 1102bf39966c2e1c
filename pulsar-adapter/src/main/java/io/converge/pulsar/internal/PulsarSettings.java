package io.converge.pulsar.internal;

import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * The immutable settings of a Pulsar backend; validated by {@code PulsarBackend.Builder.build()}.
 *
 * (transactionTimeout is null until the backend is created: then the local-transaction timeout plus the margin)
 * @param meterRegistry a Micrometer {@code MeterRegistry}, or null (typed Object: Micrometer is optional)
 * @param recoveryMaxAttempts recovery attempts after which a transaction Pulsar refuses is parked
 * @param startupWait how long the start waits for an unavailable Pulsar ({@link BrokerWait}); zero: not at all
 */
public record PulsarSettings(String serviceUrl, Duration transactionTimeout, Duration commitMargin,
    Duration sendTimeout, Duration recoveryInterval, Object meterRegistry, int recoveryMaxAttempts,
    Duration startupWait) {

  /** Settings with the default start-up wait, {@link BrokerWait#DEFAULT_LIMIT}. */
  public PulsarSettings(String serviceUrl, Duration transactionTimeout, Duration commitMargin, Duration sendTimeout,
      Duration recoveryInterval, Object meterRegistry, int recoveryMaxAttempts) {
    this(serviceUrl, transactionTimeout, commitMargin, sendTimeout, recoveryInterval, meterRegistry,
        recoveryMaxAttempts, BrokerWait.DEFAULT_LIMIT);
  }

  private static final Pattern SERVICE_URL = Pattern.compile("pulsar(\\+ssl)?://[A-Za-z0-9.:,_-]+/?");

  /** Returns {@code url} if it is a Pulsar service URL, else fails naming {@code name} and the value. */
  public static String checkServiceUrl(String name, String url) {
    Require.that(url != null && SERVICE_URL.matcher(url).matches(), name, "be pulsar://host:port[,host:port...]", url);
    return url;
  }

  public PulsarSettings withTransactionTimeout(Duration d) {
    return new PulsarSettings(serviceUrl, d, commitMargin, sendTimeout, recoveryInterval, meterRegistry,
        recoveryMaxAttempts, startupWait);
  }

  public PulsarSettings withSendTimeout(Duration d) {
    return new PulsarSettings(serviceUrl, transactionTimeout, commitMargin, d, recoveryInterval, meterRegistry,
        recoveryMaxAttempts, startupWait);
  }

  public PulsarSettings withMeterRegistry(Object registry) {
    return new PulsarSettings(serviceUrl, transactionTimeout, commitMargin, sendTimeout, recoveryInterval, registry,
        recoveryMaxAttempts, startupWait);
  }

  public PulsarSettings withRecoveryInterval(Duration d) {
    return new PulsarSettings(serviceUrl, transactionTimeout, commitMargin, sendTimeout, d, meterRegistry,
        recoveryMaxAttempts, startupWait);
  }
}
