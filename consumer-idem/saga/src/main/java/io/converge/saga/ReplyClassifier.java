package io.converge.saga;

/**
 * Sorts a reply into a {@link ReplyClass}. Implementations must be thread-safe and must not throw; a reply
 * they cannot place is an {@link ReplyClass#ANOMALY} (stop and ask a person), never a guess.
 */
@FunctionalInterface
public interface ReplyClassifier {

  /** The class of {@code reply}. */
  ReplyClass classify(SagaReply reply);

  /**
   * The default: the {@link SagaHeaders#OUTCOME} header names the class (as {@link SagaParticipant} writes it);
   * a missing or unknown value is an {@link ReplyClass#ANOMALY}.
   */
  static ReplyClassifier byOutcomeHeader() {
    return reply -> {
      if (reply.outcome() != null) {
        for (ReplyClass c : ReplyClass.values()) {
          if (c.name().equals(reply.outcome())) {
            return c;
          }
        }
      }
      return ReplyClass.ANOMALY;
    };
  }
}
