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
 * @param branchRetention in a service with {@code SagaParticipant}s: how long their barrier rows
 *     ({@code converge_saga_branch}) are kept after a step's last row was written, by the database's clock, before
 *     {@code SagaBranchPurger} deletes them; at least 7 d, and at least the coordinators'
 *     {@code participant-retention}; default 30 d
 * @param branchPurgeInterval the time between purges of the participants' rows; default 10m
 * @param participantRetention in the coordinator's service: how long its participants keep their rows (their
 *     {@code branch-retention}, or less): no command of a saga step is sent, automatically or on an operator's action,
 *     for a saga older than it less a day's margin (the saga ends with a ticket; the action is refused); at least
 *     7 d; default 30 d
 * @param retryWindow in the coordinator's service: how long past its deadline a saga may still be sending commands in
 *     its normal course (its compensations); every saga's deadline + this + 1 d must fit in
 *     {@code participant-retention}; default 1 d
 */
@ConfigurationProperties("converge.saga")
public record SagaProperties(@DefaultValue("true") boolean enabled, @DefaultValue("true") boolean migrate,
    String replyTopic, String replyGroup, @DefaultValue("1s") Duration pollInterval,
    @DefaultValue("100") int batchSize, @DefaultValue Rate compensationRate, Map<String, Rate> participantRates,
    Map<String, Participant> participants, @DefaultValue Tcc tcc, @DefaultValue("7d") Duration retention,
    @DefaultValue("10m") Duration purgeInterval, @DefaultValue("30d") Duration branchRetention,
    @DefaultValue("10m") Duration branchPurgeInterval, @DefaultValue("30d") Duration participantRetention,
    @DefaultValue("1d") Duration retryWindow) {

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
