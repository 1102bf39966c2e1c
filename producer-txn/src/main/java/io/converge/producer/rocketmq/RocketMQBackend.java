package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.RocketMQSettings;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendFactory;
import io.converge.producer.spi.TxnBackend;
import io.converge.core.internal.Require;
import java.time.Duration;
import java.util.Objects;

/**
 * The RocketMQ half-message backend: each message is sent as a half message, its local transaction
 * records it in the transaction log, then the half message is committed or rolled back. The broker's
 * check-back, for a producer that died in between, is answered from the log by any live instance of
 * the producer group. Immutable settings; thread-safe.
 *
 * <p>Needs {@code org.apache.rocketmq:rocketmq-client} on the classpath (an optional dependency of
 * {@code converge-producer-txn}).
 */
public final class RocketMQBackend implements BackendFactory {

  private final String nameServer;
  private final Duration sendTimeout;
  private final int checkThreads;

  private RocketMQBackend(String nameServer, Duration sendTimeout, int checkThreads) {
    this.nameServer = nameServer;
    this.sendTimeout = sendTimeout;
    this.checkThreads = checkThreads;
  }

  /**
   * The backend on the RocketMQ cluster of {@code nameServer} ({@code host:port[;host:port]}), with a
   * send timeout of 3 s and 2 check-back threads.
   */
  public static RocketMQBackend nameServer(String nameServer) {
    return new RocketMQBackend(RocketMQSettings.nameServer(nameServer), RocketMQSettings.DEFAULT_SEND_TIMEOUT, 2);
  }

  /** How long one send may take before it fails (the unit of work then rolls back); default 3 s. */
  public RocketMQBackend sendTimeout(Duration timeout) {
    return new RocketMQBackend(nameServer, RocketMQSettings.sendTimeout(timeout), checkThreads);
  }

  /** Threads answering check-backs; default 2. */
  public RocketMQBackend checkThreads(int threads) {
    return new RocketMQBackend(nameServer, sendTimeout, Require.between("rocketmq.checkThreads", threads, 1, 64));
  }

  @Override
  public String name() {
    return "rocketmq";
  }

  @Override
  public TxnBackend create(BackendContext context) {
    Objects.requireNonNull(context, "context");
    RocketMQSettings.requireClient("backend");
    return new HalfMessageBackend(context, nameServer, sendTimeout, checkThreads);
  }

  @Override
  public String toString() {
    return "RocketMQBackend[nameServer=" + nameServer + ", sendTimeout=" + sendTimeout + "]";
  }
}
