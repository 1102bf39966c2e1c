package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.RocketMQClients;
import io.converge.core.rocketmq.RocketMQErrors;
import io.converge.producer.spi.BackendContext;
import io.converge.producer.spi.BackendTransaction;
import io.converge.producer.spi.TxnBackend;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The started RocketMQ backend of one producer: one transactional client, one check-back listener. */
final class HalfMessageBackend implements TxnBackend {

  private static final Logger LOG = LoggerFactory.getLogger(HalfMessageBackend.class);

  private static final int END_LANES = 8;

  private final BackendContext context;
  private final TransactionMQProducer producer;
  private final ExecutorService checkExecutor;
  private final SyncEndTransaction ender;
  private final EndLanes lanes;
  private final EndRecorder recorder;
  private final FailedEnds failedEnds;

  HalfMessageBackend(BackendContext context, String nameServer, Duration sendTimeout, int checkThreads) {
    this.context = context;
    this.lanes = new EndLanes(context.group(), END_LANES, 10_000, context.metrics());
    this.recorder = new EndRecorder(context.dataSource(), context.group(), context.metrics());
    this.checkExecutor = new ThreadPoolExecutor(checkThreads, checkThreads, 60, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(2000), r -> {
          Thread t = new Thread(r, "converge-checkback-" + context.group());
          t.setDaemon(true);
          return t;
        });
    try {
      // one client instance per producer: its heartbeat registers this group's check-back listener
      this.producer = RocketMQClients.startTransactional(nameServer, context.group(), sendTimeout, 1,
          new CheckBackListener(context, recorder), checkExecutor);
    } catch (RuntimeException e) {
      lanes.close();
      recorder.close();
      checkExecutor.shutdownNow();
      throw e;
    }
    this.ender = new SyncEndTransaction(producer, sendTimeout);
    this.failedEnds = new FailedEnds(producer, ender, recorder, context.group());
    try {
      register();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * A fresh instance gets no check-back until the brokers know it: fetch the routes of the declared
   * topics and heartbeat to their brokers now, so that this instance can answer for half messages a
   * dead instance of its group left open, before it sends anything itself.
   */
  private void register() {
    MQClientInstance client = producer.getDefaultMQProducerImpl().getMqClientFactory();
    for (String topic : context.topics()) {
      boolean routed;
      try {
        routed = client.updateTopicRouteInfoFromNameServer(topic);
      } catch (IllegalStateException e) {
        // the client's wrapping of a name-server timeout or connection error
        throw RocketMQErrors.classify(e, "the route of a declared topic", null, topic,
            RocketMQErrors.brokersRegistered(producer));
      }
      if (!routed) {
        throw RocketMQErrors.noRoute(topic, "the messages of producer group " + context.group(), null, null,
            RocketMQErrors.brokersRegistered(producer));
      }
    }
    if (!context.topics().isEmpty() && !client.sendHeartbeatToAllBrokerWithLock()) {
      LOG.warn("Producer group {} could not heartbeat every broker at start; check-backs may be delayed",
          context.group());
    }
  }

  @Override
  public BackendTransaction begin() {
    return new HalfMessageTransaction(producer, ender, lanes, recorder, failedEnds, context);
  }

  @Override
  public void close() {
    lanes.close(); // let submitted ENDs reach the broker; what is left, the check-back resolves
    failedEnds.close();
    producer.shutdown();
    recorder.close(); // after the lanes: the ENDs that failed at close are recorded
    checkExecutor.shutdownNow();
  }
}
