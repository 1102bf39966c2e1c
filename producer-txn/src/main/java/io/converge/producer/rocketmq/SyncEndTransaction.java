package io.converge.producer.rocketmq;

import io.converge.core.rocketmq.RocketMQErrors;
import java.time.Duration;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageId;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader;

/**
 * Ends a half message and waits for the broker's answer. The client's own {@code endTransaction} is
 * one-way: the broker's end-transaction pool may then process two END COMMITs of one key in either
 * order, and since the broker writes the real message at END COMMIT, queue order would no longer be
 * commit order. Waiting keeps the messages of one key, ended one after another, in that order; it
 * also tells us when an END was refused. Thread-safe.
 */
final class SyncEndTransaction {

  private final TransactionMQProducer producer;
  private final long timeoutMillis;

  SyncEndTransaction(TransactionMQProducer producer, Duration timeout) {
    this.producer = producer;
    this.timeoutMillis = timeout.toMillis();
  }

  /**
   * Ends {@code msg} (sent as {@code result}) with {@code state}, COMMIT or ROLLBACK.
   *
   * @throws Exception when the broker cannot be reached or refuses the END (the check-back resolves it)
   */
  void end(Message msg, SendResult result, LocalTransactionState state) throws Exception {
    MQClientInstance client = producer.getDefaultMQProducerImpl().getMqClientFactory();
    MessageId offsetId = MessageDecoder.decodeMessageId(
        result.getOffsetMsgId() != null ? result.getOffsetMsgId() : result.getMsgId());
    String brokerName = client.getBrokerNameFromMessageQueue(producer.queueWithNamespace(result.getMessageQueue()));
    String brokerAddr = client.findBrokerAddressInPublish(brokerName);
    if (brokerAddr == null) {
      throw new IllegalStateException("no address for broker " + brokerName);
    }
    EndTransactionRequestHeader header = new EndTransactionRequestHeader();
    header.setTopic(msg.getTopic());
    header.setTransactionId(result.getTransactionId());
    header.setCommitLogOffset(offsetId.getOffset());
    header.setBrokerName(brokerName);
    header.setCommitOrRollback(state == LocalTransactionState.COMMIT_MESSAGE
        ? MessageSysFlag.TRANSACTION_COMMIT_TYPE
        : MessageSysFlag.TRANSACTION_ROLLBACK_TYPE);
    header.setProducerGroup(producer.getProducerGroup());
    header.setTranStateTableOffset(result.getQueueOffset());
    header.setMsgId(result.getMsgId());
    RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header);
    RemotingCommand response = client.getMQClientAPIImpl().getRemotingClient()
        .invokeSync(brokerAddr, request, timeoutMillis);
    if (response == null || !RocketMQErrors.endApplied(response.getCode())) {
      throw new IllegalStateException("broker " + brokerName + " answered "
          + (response == null ? "nothing" : response.getCode() + " " + response.getRemark()));
    }
  }
}
