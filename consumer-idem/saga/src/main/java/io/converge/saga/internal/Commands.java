package io.converge.saga.internal;

import io.converge.producer.OutgoingMessage;
import io.converge.saga.SagaHeaders;
import io.converge.saga.SagaStep;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
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

  /**
   * A command of one step; a TCC branch's call carries the {@link TccHeaders} too (global id = the saga id, branch
   * id, operation).
   */
  static OutgoingMessage command(String topic, SagaRow saga, SagaStep<?> step, int attempt, String direction,
      long version, String replyTopic, byte[] payload) {
    OutgoingMessage.Builder b = OutgoingMessage.builder(topic).id(envelopeId(saga.id(), version, step.name(),
        direction)).key(saga.id()).tenant(saga.tenant()).header(SagaHeaders.SAGA_ID, saga.id())
        .header(SagaHeaders.STEP, step.name()).header(SagaHeaders.ATTEMPT, Integer.toString(attempt))
        .header(SagaHeaders.DIRECTION, direction)
        .header(SagaHeaders.COMMAND_ID, commandId(saga.id(), step.name(), attempt, direction))
        .header(SagaHeaders.REPLY_TO, replyTopic).payload(payload);
    if (step.branch() != null) {
      b.header(TccHeaders.GLOBAL_ID, saga.id()).header(TccHeaders.BRANCH_ID, step.branch())
          .header(TccHeaders.OPERATION, operation(step, direction).wireName());
    }
    return b.build();
  }

  /** The TCC operation of {@code step}'s command in {@code direction}: a compensation is a Cancel. */
  static TccOperation operation(SagaStep<?> step, String direction) {
    return SagaHeaders.COMPENSATE.equals(direction) ? TccOperation.CANCEL : step.operation();
  }

  private static String uuid(String name) {
    return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString();
  }
}
