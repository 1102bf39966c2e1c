package io.converge.ops.bench.baseline;

/** Baseline: a raw RocketMQ transactional send (half message + immediate COMMIT), 1 KiB, no DB. */
public final class RocketMQTxnSend extends RocketMQSend {

  /** The transactional variant of {@link RocketMQSend}. */
  public RocketMQTxnSend() {
    super(true);
  }
}
