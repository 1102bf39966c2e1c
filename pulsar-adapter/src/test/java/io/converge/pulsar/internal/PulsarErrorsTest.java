package io.converge.pulsar.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class PulsarErrorsTest {

  @ParameterizedTest
  @ValueSource(classes = {PulsarClientException.InvalidMessageException.class,
      PulsarClientException.TopicDoesNotExistException.class, PulsarClientException.NotFoundException.class,
      PulsarClientException.TopicTerminatedException.class, PulsarClientException.NotAllowedException.class,
      PulsarClientException.AuthorizationException.class, PulsarClientException.IncompatibleSchemaException.class,
      PulsarClientException.InvalidTopicNameException.class})
  void permanentRefusalsAreInvalidMessagesNamingMessageAndTopic(Class<? extends Exception> type) throws Exception {
    assertRefusal(type.getConstructor(String.class).newInstance("refused: " + type.getSimpleName()));
  }

  /** As {@code sendAsync().get()} and a {@code CompletableFuture} chain deliver them, or wrapped by the client. */
  @ParameterizedTest
  @MethodSource
  void wrappedRefusalsAreInvalidMessagesNamingMessageAndTopic(Exception e) {
    assertRefusal(e);
  }

  static Stream<Exception> wrappedRefusalsAreInvalidMessagesNamingMessageAndTopic() {
    return Stream.of(new ExecutionException(new PulsarClientException.TopicTerminatedException("terminated")),
        new CompletionException(new PulsarClientException.NotAllowedException("not allowed")),
        new PulsarClientException(new PulsarClientException.AuthorizationException("wrapped")));
  }

  private static void assertRefusal(Exception e) {
    ConvergeException c = PulsarErrors.classify(e, "m-1", "orders");
    assertThat(c).as("%s", e).isInstanceOf(InvalidMessageException.class);
    assertThat(c.getMessage()).startsWith("Pulsar refused message m-1 on orders: ");
    assertThat(c.messageId()).isEqualTo("m-1");
  }

  @ParameterizedTest
  @ValueSource(classes = {PulsarClientException.TimeoutException.class, PulsarClientException.ConnectException.class,
      PulsarClientException.LookupException.class, PulsarClientException.ServiceNotReadyException.class,
      PulsarClientException.ProducerBlockedQuotaExceededException.class,
      PulsarClientException.AuthenticationException.class, PulsarClientException.AlreadyClosedException.class,
      java.util.concurrent.TimeoutException.class})
  void connectionsTimeoutsAndOverloadAreOutages(Class<? extends Exception> type) throws Exception {
    assertOutage(type.getConstructor(String.class).newInstance("outage: " + type.getSimpleName()));
  }

  @Test
  void aWrappedTimeoutIsAnOutage() {
    assertOutage(new ExecutionException(new PulsarClientException.TimeoutException("timed out")));
    assertOutage(new java.util.concurrent.TimeoutException()); // the JDK's, without a message
  }

  private static void assertOutage(Exception e) {
    ConvergeException c = PulsarErrors.classify(e, "m-2", "orders");
    assertThat(c).as("%s", e).isExactlyInstanceOf(BrokerUnavailableException.class);
    assertThat(c.getMessage()).startsWith("Pulsar is unavailable for message m-2 on orders: ");
  }

  @Test
  void aConvergeErrorIsKept() {
    InvalidMessageException e = new InvalidMessageException("bad", "m-3", null);
    assertThat(PulsarErrors.classify(e, "m-3", "orders")).isSameAs(e);
  }
}
