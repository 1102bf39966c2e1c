package io.converge.pulsar.internal;

import java.time.Duration;

/** The immutable settings of a Pulsar backend; validated by {@code PulsarBackend}. */
public record PulsarSettings(String serviceUrl, Duration transactionTimeout, Duration commitMargin,
    Duration sendTimeout, Duration recoveryInterval) {

  public PulsarSettings withTransactionTimeout(Duration d) {
    return new PulsarSettings(serviceUrl, d, commitMargin, sendTimeout, recoveryInterval);
  }

  public PulsarSettings withCommitMargin(Duration d) {
    return new PulsarSettings(serviceUrl, transactionTimeout, d, sendTimeout, recoveryInterval);
  }

  public PulsarSettings withSendTimeout(Duration d) {
    return new PulsarSettings(serviceUrl, transactionTimeout, commitMargin, d, recoveryInterval);
  }

  public PulsarSettings withRecoveryInterval(Duration d) {
    return new PulsarSettings(serviceUrl, transactionTimeout, commitMargin, sendTimeout, d);
  }
}
