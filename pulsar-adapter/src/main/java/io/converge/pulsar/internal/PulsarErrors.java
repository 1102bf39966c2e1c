package io.converge.pulsar.internal;

import io.converge.core.BrokerUnavailableException;
import io.converge.core.ConvergeException;
import io.converge.core.InvalidMessageException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;

/**
 * The one classification of Pulsar send failures, for the producer backend and the outbox sink: a
 * refusal of the message itself ({@link InvalidMessageException}: sending it again fails the same way,
 * so it counts as an attempt and parks) or an outage ({@link BrokerUnavailableException}: nothing is
 * wrong with the message; retry with backoff, never park). Stateless.
 */
public final class PulsarErrors {

  /**
   * Errors that name this message or its topic, not the connection: too large or malformed, a topic
   * that does not exist and may not be created, terminated (a deleted-topic stand-in that refuses every
   * write), not allowed, not authorized, a schema the topic refuses, an illegal topic name.
   */
  private static final List<Class<? extends PulsarClientException>> REFUSALS = List.of(
      PulsarClientException.InvalidMessageException.class,
      PulsarClientException.InvalidTopicNameException.class,
      PulsarClientException.TopicDoesNotExistException.class,
      PulsarClientException.NotFoundException.class,
      PulsarClientException.TopicTerminatedException.class,
      PulsarClientException.NotAllowedException.class,
      PulsarClientException.AuthorizationException.class,
      PulsarClientException.IncompatibleSchemaException.class);

  /**
   * Errors that say the broker could not be reached or is not ready yet: no connection, no answer in time, a lookup
   * or metadata call that failed, a broker or transaction coordinator still starting.
   */
  private static final List<Class<? extends Throwable>> OUTAGES = List.of(
      PulsarClientException.TimeoutException.class,
      PulsarClientException.ConnectException.class,
      PulsarClientException.LookupException.class,
      PulsarClientException.BrokerMetadataException.class,
      PulsarClientException.ServiceNotReadyException.class,
      PulsarClientException.TooManyRequestsException.class,
      PulsarClientException.NotConnectedException.class,
      TransactionCoordinatorClientException.CoordinatorNotFoundException.class,
      TransactionCoordinatorClientException.MetaStoreHandlerNotReadyException.class,
      java.net.ConnectException.class,
      java.util.concurrent.TimeoutException.class);

  private PulsarErrors() {
  }

  /**
   * True when {@code error} (or a cause of it) says Pulsar is unavailable at start-up (refused or timed-out
   * connection, lookup timeout, coordinator not ready), and no cause is a refusal or another answer of the broker:
   * what a start-up wait may wait out. A bad service URL, an authentication or authorization error or a refused
   * subscription (busy, not allowed) is false: waiting cannot change it. An untyped {@code PulsarClientException}
   * as the innermost Pulsar error is the client's own connection failure ("Connection already closed" when the
   * handshake of a stalled broker times out): an outage too.
   */
  public static boolean isStartupOutage(Throwable error) {
    boolean outage = false;
    Throwable innermost = null;
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof PulsarClientException || t instanceof TransactionCoordinatorClientException) {
        innermost = t;
      }
      if (t instanceof PulsarClientException.InvalidServiceURL
          || t instanceof PulsarClientException.AuthenticationException
          || t instanceof PulsarClientException.UnsupportedAuthenticationException
          || t instanceof PulsarClientException.InvalidConfigurationException
          || t instanceof PulsarClientException.ConsumerBusyException
          || t instanceof PulsarClientException.ConsumerAssignException) {
        return false;
      }
      for (Class<? extends Throwable> refusal : REFUSALS) {
        if (refusal.isInstance(t)) {
          return false;
        }
      }
      for (Class<? extends Throwable> o : OUTAGES) {
        outage |= o.isInstance(t);
      }
    }
    return outage || innermost != null && innermost.getClass() == PulsarClientException.class;
  }

  /** True when {@code error} (or a cause of it) is a refusal of the message rather than an outage. */
  public static boolean isRefusal(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      for (Class<? extends PulsarClientException> refusal : REFUSALS) {
        if (refusal.isInstance(t)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The typed error for a failed send of message {@code messageId} to {@code topic}: an
   * {@link InvalidMessageException} ("Pulsar refused message ...") for a refusal, else a
   * {@link BrokerUnavailableException} ("Pulsar is unavailable for message ..."); a Converge error is
   * returned as it is. Never null.
   */
  public static ConvergeException classify(Throwable error, String messageId, String topic) {
    if (error instanceof ConvergeException c) {
      return c;
    }
    Throwable cause = unwrap(error);
    if (isRefusal(cause)) {
      return new InvalidMessageException("Pulsar refused message " + messageId + " on " + topic + ": " + cause,
          messageId,
          cause);
    }
    return new BrokerUnavailableException(
        "Pulsar is unavailable for message " + messageId + " on " + topic + ": " + cause,
        messageId, cause);
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
