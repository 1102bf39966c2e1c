package io.converge.pulsar.internal;

import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The immutable settings of a Pulsar backend; validated by {@code PulsarBackend}.
 *
 * (transactionTimeout is null until the backend is created: then the local-transaction timeout plus the margin)
 * @param meterRegistry a Micrometer {@code MeterRegistry}, or null (typed Object: Micrometer is optional)
 * @param recoveryMaxAttempts recovery attempts after which a transaction Pulsar refuses is parked
 */
public record PulsarSettings(String serviceUrl, Duration transactionTimeout, Duration commitMargin,
    Duration sendTimeout, Duration recoveryInterval, Object meterRegistry, int recoveryMaxAttempts) {

  private static final Pattern SERVICE_URL = Pattern.compile("pulsar(\\+ssl)?://[A-Za-z0-9.:,_-]+/?");

  /** Returns {@code url} if it is a Pulsar service URL, else fails naming {@code name} and the value. */
  public static String checkServiceUrl(String name, String url) {
    Require.that(url != null && SERVICE_URL.matcher(url).matches(), name, "be pulsar://host:port[,host:port...]", url);
    return url;
  }

  public PulsarSettings withTransactionTimeout(Duration d) {
    return with(f -> f.transactionTimeout = d);
  }

  public PulsarSettings withCommitMargin(Duration d) {
    return with(f -> f.commitMargin = d);
  }

  public PulsarSettings withSendTimeout(Duration d) {
    return with(f -> f.sendTimeout = d);
  }

  public PulsarSettings withMeterRegistry(Object registry) {
    return with(f -> f.meterRegistry = registry);
  }

  public PulsarSettings withRecoveryMaxAttempts(int n) {
    return with(f -> f.recoveryMaxAttempts = n);
  }

  public PulsarSettings withRecoveryInterval(Duration d) {
    return with(f -> f.recoveryInterval = d);
  }

  /** A copy of these settings with {@code change} applied. */
  private PulsarSettings with(Consumer<Fields> change) {
    Fields f = new Fields(this);
    change.accept(f);
    return new PulsarSettings(f.serviceUrl, f.transactionTimeout, f.commitMargin, f.sendTimeout, f.recoveryInterval,
        f.meterRegistry, f.recoveryMaxAttempts);
  }

  /** The settings as a mutable copy, for {@link #with}. */
  private static final class Fields {

    final String serviceUrl;
    Duration transactionTimeout;
    Duration commitMargin;
    Duration sendTimeout;
    Duration recoveryInterval;
    Object meterRegistry;
    int recoveryMaxAttempts;

    Fields(PulsarSettings s) {
      serviceUrl = s.serviceUrl;
      transactionTimeout = s.transactionTimeout;
      commitMargin = s.commitMargin;
      sendTimeout = s.sendTimeout;
      recoveryInterval = s.recoveryInterval;
      meterRegistry = s.meterRegistry;
      recoveryMaxAttempts = s.recoveryMaxAttempts;
    }
  }
}
