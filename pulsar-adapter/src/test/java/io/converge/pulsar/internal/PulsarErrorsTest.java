package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.producer.BrokerUnavailableException;
import io.converge.producer.ConvergeException;
import io.converge.producer.InvalidMessageException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;

class PulsarErrorsTest {

  @Test
  void permanentRefusalsAreInvalidMessagesNamingMessageAndTopic() {
    for (Exception e : new Exception[]{
        new PulsarClientException.InvalidMessageException("Message size is bigger than 5242880 bytes"),
        new PulsarClientException.TopicDoesNotExistException("Topic does not exist"),
        new PulsarClientException.NotFoundException("Namespace not found"),
        new PulsarClientException.TopicTerminatedException("Topic was already terminated"),
        new PulsarClientException.NotAllowedException("not allowed"),
        new PulsarClientException.AuthorizationException("not authorized"),
        new PulsarClientException.IncompatibleSchemaException("incompatible"),
        new PulsarClientException.InvalidTopicNameException("bad name"),
        // as sendAsync().get() and a CompletableFuture chain deliver them
        new ExecutionException(new PulsarClientException.TopicTerminatedException("terminated")),
        new CompletionException(new PulsarClientException.NotAllowedException("not allowed")),
        new PulsarClientException(new PulsarClientException.AuthorizationException("wrapped"))}) {
      ConvergeException c = PulsarErrors.classify(e, "m-1", "orders");
      assertThat(c).as("%s", e).isInstanceOf(InvalidMessageException.class);
      assertThat(c.getMessage()).startsWith("Pulsar refused message m-1 on orders: ");
      assertThat(c.messageId()).isEqualTo("m-1");
    }
  }

  @Test
  void connectionsTimeoutsAndOverloadAreOutages() {
    for (Exception e : new Exception[]{
        new PulsarClientException.TimeoutException("timed out"),
        new PulsarClientException.ConnectException("connection refused"),
        new PulsarClientException.LookupException("lookup failed"),
        new PulsarClientException.ServiceNotReadyException("not ready"),
        new PulsarClientException.ProducerBlockedQuotaExceededException("backlog quota"),
        new PulsarClientException.AuthenticationException("token expired"),
        new PulsarClientException.AlreadyClosedException("closed"),
        new ExecutionException(new PulsarClientException.TimeoutException("timed out")),
        new java.util.concurrent.TimeoutException()}) {
      ConvergeException c = PulsarErrors.classify(e, "m-2", "orders");
      assertThat(c).as("%s", e).isExactlyInstanceOf(BrokerUnavailableException.class);
      assertThat(c.getMessage()).startsWith("Pulsar is unavailable for message m-2 on orders: ");
    }
  }

  @Test
  void aConvergeErrorIsKept() {
    InvalidMessageException e = new InvalidMessageException("bad", "m-3", null);
    assertThat(PulsarErrors.classify(e, "m-3", "orders")).isSameAs(e);
  }
}
