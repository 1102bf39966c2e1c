package io.converge.examples.demo;

import java.util.Locale;

/** The three {@code TxnProducer} backends the services can run on: one value of {@code converge.producer.mode}. */
public enum Backend {

  /** RocketMQ half messages with check-back; consumers on RocketMQ. */
  ROCKETMQ,
  /** The transactional outbox and its relay into RocketMQ; consumers on RocketMQ. */
  OUTBOX,
  /** Pulsar transactions paired with the transaction log; consumers on Pulsar. */
  PULSAR;

  /** The value of {@code converge.producer.mode}. */
  public String mode() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** True when the messages travel through Pulsar rather than RocketMQ. */
  public boolean onPulsar() {
    return this == PULSAR;
  }

  /** Parses {@code rocketmq}, {@code outbox} or {@code pulsar}. */
  public static Backend parse(String s) {
    for (Backend b : values()) {
      if (b.mode().equalsIgnoreCase(s.trim())) {
        return b;
      }
    }
    throw new IllegalArgumentException("backend must be one of rocketmq, outbox, pulsar, but was " + s);
  }
}
