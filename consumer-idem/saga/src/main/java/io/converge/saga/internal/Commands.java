package io.converge.saga.internal;

import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The messages of a saga: deterministic ids and the headers of commands and replies. Stateless.
 */
public final class Commands {

  private Commands() {
  }

  /** The command id of (saga, step, attempt, direction): the same for every re-send of one command. */
  public static String commandId(String sagaId, String step, int attempt, String direction) {
    return uuid(sagaId + '\n' + step + '\n' + attempt + '\n' + direction);
  }

  /**
   * The envelope id of the send made by the transition to {@code version}: one transition sends at most one
   * command, so each send has its own id, and the same transition (there is only one commit of it) the same one.
   */
  static String envelopeId(String sagaId, long version, String step, String direction) {
    return uuid(sagaId + '\n' + version + '\n' + step + '\n' + direction + "\nsend");
  }

  /** A command of one step. */
  static OutgoingMessage command(String topic, SagaRow saga, String step, int attempt, String direction,
      long version, String replyTopic, byte[] payload) {
    return OutgoingMessage.builder(topic).id(envelopeId(saga.id(), version, step, direction)).key(saga.id())
        .tenant(saga.tenant()).header(SagaHeaders.SAGA_ID, saga.id()).header(SagaHeaders.STEP, step)
        .header(SagaHeaders.ATTEMPT, Integer.toString(attempt)).header(SagaHeaders.DIRECTION, direction)
        .header(SagaHeaders.COMMAND_ID, commandId(saga.id(), step, attempt, direction))
        .header(SagaHeaders.REPLY_TO, replyTopic).payload(payload).build();
  }

  private static String uuid(String name) {
    return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
  }
}
