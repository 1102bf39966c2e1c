package io.converge.core.rocketmq;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.MessageListener;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The one place where Converge sets up and starts a RocketMQ client: name server, group, an instance of
 * its own ({@link #uniqueInstance}: each client has its own connections and heartbeat, several share a
 * JVM), send timeout, retries, message size; a client that fails to start is shut down and reported.
 * Converge-internal (see the package documentation). Stateless.
 */
public final class RocketMQClients {

  /**
   * Sends this client's request headers in RocketMQ's binary encoding rather than JSON (same fields; every
   * broker and name server decodes both): the JSON encoding of the half message's and the END's headers
   * was about 5% of the CPU of a unit (converge bench, JFR, issue 15). Answers keep the server's encoding.
   */
  private static final RPCHook BINARY_HEADERS = new RPCHook() {

    @Override
    public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
      request.setSerializeTypeCurrentRPC(SerializeType.ROCKETMQ);
    }

    @Override
    public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
      // nothing: the answer is decoded in whatever encoding it came
    }
  };

  private RocketMQClients() {
  }

  /** A started plain producer with the client's defaults (3 s send timeout, 2 retries, 4 MiB). */
  public static DefaultMQProducer startProducer(String nameServer, String group) {
    return startProducer(nameServer, group, RocketMQSettings.DEFAULT_SEND_TIMEOUT, RocketMQSettings.DEFAULT_RETRIES,
        RocketMQSettings.DEFAULT_MAX_MESSAGE_BYTES);
  }

  /**
   * A started plain producer.
   *
   * @param sendTimeout how long a send may take; also bounds {@link RocketMQErrors#brokersRegistered(DefaultMQProducer)}
   * @param retries how often the client itself retries a failed synchronous send, on another queue: 0 where a
   *     key's order matters and the caller retries
   * @param maxMessageBytes the largest body the client sends
   * @throws BrokerUnavailableException when it cannot start
   */
  public static DefaultMQProducer startProducer(String nameServer, String group, Duration sendTimeout, int retries,
      int maxMessageBytes) {
    DefaultMQProducer producer = configure(new DefaultMQProducer(group), nameServer, sendTimeout, retries);
    producer.setMaxMessageSize(maxMessageBytes);
    return start(producer, nameServer);
  }

  /**
   * A started transactional producer whose check-backs {@code listener} answers on {@code checkExecutor}
   * (4 MiB bodies). Parameters as {@link #startProducer(String, String, Duration, int, int)}.
   *
   * @throws BrokerUnavailableException when it cannot start
   */
  public static TransactionMQProducer startTransactional(String nameServer, String group, Duration sendTimeout,
      int retries, TransactionListener listener, ExecutorService checkExecutor) {
    TransactionMQProducer producer = configure(new TransactionMQProducer(group, BINARY_HEADERS), nameServer,
        sendTimeout, retries);
    producer.setExecutorService(checkExecutor);
    producer.setTransactionListener(listener);
    return start(producer, nameServer);
  }

  /**
   * A started clustering push consumer of {@code topic} ({@code tags}), one message per call of
   * {@code listener} on {@code threads} threads; a group with no committed offset starts from the first
   * offset of each queue. {@code listener} is a {@code MessageListenerOrderly} (each queue locked and
   * consumed by one thread at a time, in order) or a {@code MessageListenerConcurrently}.
   *
   * @param instanceName the client instance; null for {@link #uniqueInstance}
   * @param consumeTimeout how long one message may be in the listener before RocketMQ sends it back to
   *     the broker (RocketMQ's {@code consumeTimeout}, whole minutes)
   * @throws ConvergeException when it cannot start
   */
  public static DefaultMQPushConsumer startPushConsumer(String nameServer, String group, String instanceName,
      int threads, Duration consumeTimeout, String topic, String tags, MessageListener listener) {
    DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
    consumer.setNamesrvAddr(nameServer);
    consumer.setInstanceName(instanceName != null ? instanceName : uniqueInstance(group));
    consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
    consumer.setConsumeThreadMin(threads);
    consumer.setConsumeThreadMax(threads);
    consumer.setConsumeMessageBatchMaxSize(1);
    consumer.setConsumeTimeout(consumeTimeout.toMinutes());
    try {
      consumer.subscribe(topic, tags);
      if (listener instanceof MessageListenerOrderly orderly) {
        consumer.registerMessageListener(orderly); // one thread per queue at a time, in queue order
      } else {
        consumer.registerMessageListener((MessageListenerConcurrently) listener);
      }
      consumer.start();
      return consumer;
    } catch (MQClientException e) {
      consumer.shutdown();
      throw new ConvergeException("Cannot start the RocketMQ consumer of group " + group + " on topic " + topic
          + " (name server " + nameServer + ")", e);
    }
  }

  /** An instance name no other client has: {@code group@pid-uuid}. */
  public static String uniqueInstance(String group) {
    return group + "@" + ManagementFactory.getRuntimeMXBean().getPid() + "-" + UUID.randomUUID();
  }

  private static <P extends DefaultMQProducer> P configure(P producer, String nameServer, Duration sendTimeout,
      int retries) {
    producer.setNamesrvAddr(nameServer);
    producer.setInstanceName(uniqueInstance(producer.getProducerGroup()));
    producer.setSendMsgTimeout((int) sendTimeout.toMillis());
    producer.setRetryTimesWhenSendFailed(retries);
    return producer;
  }

  private static <P extends DefaultMQProducer> P start(P producer, String nameServer) {
    try {
      producer.start();
      return producer;
    } catch (MQClientException e) {
      producer.shutdown();
      throw new BrokerUnavailableException("RocketMQ producer of group " + producer.getProducerGroup() + " (instance "
          + producer.getInstanceName() + ") cannot start against " + nameServer + ": " + e.getErrorMessage(), null, e);
    }
  }
}
