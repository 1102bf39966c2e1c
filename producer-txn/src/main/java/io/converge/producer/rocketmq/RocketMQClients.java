package io.converge.producer.rocketmq;

import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;

/**
 * The one place where Converge sets up and starts a RocketMQ client: name server, group, an instance of
 * its own (so that each client has its own connections and heartbeat, and several share a JVM), send
 * timeout, retries, message size; a client that fails to start is shut down and reported. Settings not
 * given keep the client's defaults. Converge-internal (see the package documentation). Stateless.
 */
public final class RocketMQClients {

  private RocketMQClients() {}

  /** The set-up of a producer of {@code group} on the name servers {@code nameServer}. */
  public static ProducerSetup producer(String nameServer, String group) {
    return new ProducerSetup(nameServer, group);
  }

  /** The set-up of a clustering push consumer of {@code group} on the name servers {@code nameServer}. */
  public static ConsumerSetup consumer(String nameServer, String group) {
    return new ConsumerSetup(nameServer, group);
  }

  /** An instance name no other client has: {@code group@pid-uuid}. */
  public static String uniqueInstance(String group) {
    return group + "@" + ManagementFactory.getRuntimeMXBean().getPid() + "-" + UUID.randomUUID();
  }

  /** Settings of one producer; not thread-safe. */
  public static final class ProducerSetup {
    private final String nameServer;
    private final String group;
    private String instanceName;
    private Duration sendTimeout;
    private Integer retries;
    private Integer maxMessageBytes;

    private ProducerSetup(String nameServer, String group) {
      this.nameServer = nameServer;
      this.group = group;
      this.instanceName = uniqueInstance(group);
    }

    /** The client instance; default {@link #uniqueInstance(String)}. */
    public ProducerSetup instanceName(String name) {
      this.instanceName = name;
      return this;
    }

    /** How long a send may take (also the bound of {@link RocketMQErrors#brokersRegistered(DefaultMQProducer)}). */
    public ProducerSetup sendTimeout(Duration timeout) {
      this.sendTimeout = timeout;
      return this;
    }

    /**
     * How often the client itself retries a failed synchronous send (on another queue: 0 where a key's
     * order matters and the caller retries).
     */
    public ProducerSetup retries(int retries) {
      this.retries = retries;
      return this;
    }

    /** The largest body the client sends. */
    public ProducerSetup maxMessageBytes(int bytes) {
      this.maxMessageBytes = bytes;
      return this;
    }

    /**
     * A started plain producer.
     *
     * @throws BrokerUnavailableException when it cannot start
     */
    public DefaultMQProducer start() {
      return start(configure(new DefaultMQProducer(group)));
    }

    /**
     * A started transactional producer whose check-backs {@code listener} answers on {@code checkExecutor}.
     *
     * @throws BrokerUnavailableException when it cannot start
     */
    public TransactionMQProducer startTransactional(TransactionListener listener, ExecutorService checkExecutor) {
      TransactionMQProducer producer = configure(new TransactionMQProducer(group));
      producer.setExecutorService(checkExecutor);
      producer.setTransactionListener(listener);
      return start(producer);
    }

    private <P extends DefaultMQProducer> P configure(P producer) {
      producer.setNamesrvAddr(nameServer);
      producer.setInstanceName(instanceName);
      if (sendTimeout != null) {
        producer.setSendMsgTimeout((int) sendTimeout.toMillis());
      }
      if (retries != null) {
        producer.setRetryTimesWhenSendFailed(retries);
      }
      if (maxMessageBytes != null) {
        producer.setMaxMessageSize(maxMessageBytes);
      }
      return producer;
    }

    private <P extends DefaultMQProducer> P start(P producer) {
      try {
        producer.start();
        return producer;
      } catch (MQClientException e) {
        producer.shutdown();
        throw new BrokerUnavailableException("RocketMQ producer of group " + group + " (instance " + instanceName
            + ") cannot start against " + nameServer + ": " + e.getErrorMessage(), null, e);
      }
    }
  }

  /** Settings of one push consumer; not thread-safe. */
  public static final class ConsumerSetup {
    private final String nameServer;
    private final String group;
    private String instanceName;
    private int threads = 4;
    private Duration consumeTimeout;

    private ConsumerSetup(String nameServer, String group) {
      this.nameServer = nameServer;
      this.group = group;
      this.instanceName = uniqueInstance(group);
    }

    /** The client instance; default {@link #uniqueInstance(String)}. */
    public ConsumerSetup instanceName(String name) {
      this.instanceName = name;
      return this;
    }

    /** Consumer threads; default 4. */
    public ConsumerSetup threads(int threads) {
      this.threads = threads;
      return this;
    }

    /** How long one message may be in the listener before RocketMQ sends it back (RocketMQ's {@code consumeTimeout}). */
    public ConsumerSetup consumeTimeout(Duration timeout) {
      this.consumeTimeout = timeout;
      return this;
    }

    /**
     * A started consumer of {@code topic} ({@code tags}), one message per call of {@code listener}; a
     * group with no committed offset starts from the first offset of each queue.
     *
     * @throws ConvergeException when it cannot start
     */
    public DefaultMQPushConsumer start(String topic, String tags, MessageListenerConcurrently listener) {
      DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
      consumer.setNamesrvAddr(nameServer);
      consumer.setInstanceName(instanceName);
      consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
      consumer.setConsumeThreadMin(threads);
      consumer.setConsumeThreadMax(threads);
      consumer.setConsumeMessageBatchMaxSize(1);
      if (consumeTimeout != null) {
        consumer.setConsumeTimeout(consumeTimeout.toMinutes());
      }
      try {
        consumer.subscribe(topic, tags);
        consumer.registerMessageListener(listener);
        consumer.start();
        return consumer;
      } catch (MQClientException e) {
        consumer.shutdown();
        throw new ConvergeException("Cannot start the RocketMQ consumer of group " + group + " on topic " + topic
            + " (name server " + nameServer + ")", e);
      }
    }
  }
}
