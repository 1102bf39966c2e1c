package io.converge.saga.spring;

import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The saga coordinator's and participants' Spring settings, {@code converge.saga.*}. Immutable; validated where
 * they are used (the coordinator's builder names the setting and quotes the bad value).
 *
 * @param enabled whether the saga auto-configuration runs; default true
 * @param migrate whether the saga tables are created or migrated at start; default true
 * @param replyTopic the topic participants reply to; required when the application defines a {@code SagaDefinition}
 * @param replyGroup the reply handler's consumer group; default {@code converge-saga-<replyTopic>}
 * @param pollInterval the wait between polls for due sagas; default 1 s
 * @param batchSize due sagas driven per poll at most; default 100
 * @param compensationRate the compensation rate of participants without one of their own; default 50/s, burst 50
 * @param participantRates compensation rates per participant name
 * @param participants where each {@code SagaParticipant} or {@code TccParticipant} bean (by its name) consumes its
 *     commands
 * @param tcc the TCC participants' barrier purge
 * @param retention how long a finished saga (with its events and tickets) is kept before the coordinator's service
 *     purges it ({@code SagaPurger}: COMPLETED, COMPENSATED, and stopped sagas, once their tickets are all resolved); at
 *     least 24 h; default 7 d
 * @param purgeInterval the time between purges of finished sagas; default 10m (as the dedup purge's)
 */
@ConfigurationProperties("converge.saga")
public record SagaProperties(@DefaultValue("true") boolean enabled, @DefaultValue("true") boolean migrate,
    String replyTopic, String replyGroup, @DefaultValue("1s") Duration pollInterval,
    @DefaultValue("100") int batchSize, @DefaultValue Rate compensationRate, Map<String, Rate> participantRates,
    Map<String, Participant> participants, @DefaultValue Tcc tcc, @DefaultValue("7d") Duration retention,
    @DefaultValue("10m") Duration purgeInterval) {

  /** Null maps become empty. */
  public SagaProperties {
    participantRates = participantRates == null ? Map.of() : Map.copyOf(participantRates);
    participants = participants == null ? Map.of() : Map.copyOf(participants);
  }

  /**
   * The purge of the TCC barrier's finished branches, {@code converge.saga.tcc.*}, scheduled when the context has a
   * {@code TccParticipant} bean.
   *
   * @param retention how long a finished branch's rows are kept; at least 24 h; default 7 d
   * @param purgeInterval the time between purges; default 10m (as the dedup purge's)
   */
  public record Tcc(@DefaultValue("7d") Duration retention, @DefaultValue("10m") Duration purgeInterval) {
  }

  /**
   * A token bucket of compensation commands.
   *
   * @param perSecond commands a second; default 50
   * @param burst commands at once at most; default 50
   */
  public record Rate(@DefaultValue("50") double perSecond, @DefaultValue("50") int burst) {
  }

  /**
   * A participant's subscriptions, {@code converge.saga.participants.<name>.*}: its commands and its compensations
   * are consumed by two consumers of their own (own pools, own groups), so a compensation storm never waits behind
   * the forward path.
   *
   * @param commandTopic the topic of its step commands (a TCC participant's: its Tries, and its Confirms and Cancels
   *     unless they have topics of their own); required
   * @param compensationTopic the topic of its compensation commands (a TCC participant's Cancels); null when it has
   *     none
   * @param confirmTopic a TCC participant's Confirms, when they have a topic of their own; null otherwise
   * @param group the consumer group of its commands; default the participant's name ({@code <group>-compensation}
   *     for its compensations, {@code <group>-confirm} for its Confirms)
   */
  public record Participant(String commandTopic, String compensationTopic, String confirmTopic, String group) {
  }
}
