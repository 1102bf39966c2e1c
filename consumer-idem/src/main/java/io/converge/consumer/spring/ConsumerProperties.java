package io.converge.consumer.spring;

import io.converge.consumer.FailurePolicy;
import io.converge.consumer.IdempotentHandler;
import io.converge.core.SigningKeys;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code converge.consumer.*}: immutable, validated when the context starts.
 *
 * @param enabled whether {@code @IdempotentConsumer} methods are subscribed; default true
 * @param migrate apply the consumer tables' migrations at start-up; default true
 * @param rocketmq the RocketMQ binding
 * @param policies named failure policies; {@code default} is used when a name is not configured
 * @param dedup retention of {@code converge_dedup}
 * @param requireSignature every {@code @IdempotentConsumer} handler requires a valid {@code converge-signature},
 *     verified with any active key of the {@code SigningKeys} bean ({@code converge.signing.*}); default false
 * @param replayWindow the replay window ({@code REPLAYED}); default off, or 7d less 5m and 5m with
 *     {@code require-signature}
 * @param acceptSchema the schema majors every handler reads, by type ({@code converge.consumer.accept-schema.order=1,2});
 *     default none: no schema is checked
 * @param requireSchema a message without {@code converge-schema} is parked too; needs {@code accept-schema};
 *     default false
 */
@ConfigurationProperties("converge.consumer")
public record ConsumerProperties(
    @DefaultValue("true") boolean enabled,
    @DefaultValue("true") boolean migrate,
    @DefaultValue Rocketmq rocketmq,
    Map<String, Policy> policies,
    @DefaultValue Dedup dedup,
    @DefaultValue("false") boolean requireSignature,
    @DefaultValue ReplayWindow replayWindow,
    Map<String, List<Integer>> acceptSchema,
    @DefaultValue("false") boolean requireSchema) {

  /**
   * {@code converge.consumer.replay-window.*}: both or neither ({@code IdempotentHandler.Builder.replayWindow}).
   *
   * @param maxAge the oldest a message may arrive; 1m..365d
   * @param clockSkew how far in the future its creation time may be; 0..1h
   */
  public record ReplayWindow(Duration maxAge, Duration clockSkew) {
  }

  /**
   * Sets the envelope rules of {@code converge.consumer.*} on {@code b}: {@code require-signature} with
   * {@code keys}, the replay window, the accepted schemas.
   *
   * @throws IllegalStateException naming {@code converge.signing.current-key-id} when a signature is required without
   *     keys
   */
  IdempotentHandler.Builder applyEnvelopeRules(IdempotentHandler.Builder b, SigningKeys keys) {
    if (requireSignature) {
      if (keys == null) {
        throw new IllegalStateException("converge.consumer.require-signature=true needs a SigningKeys bean: set "
            + "converge.signing.current-key-id and converge.signing.secrets.<id>, or declare one");
      }
      b.requireSignature(keys);
    }
    if (replayWindow.maxAge() != null || replayWindow.clockSkew() != null) {
      b.replayWindow(replayWindow.maxAge(), replayWindow.clockSkew());
    }
    if (acceptSchema != null) {
      acceptSchema.forEach((type, majors) -> majors.forEach(major -> b.acceptSchema(type, major)));
    }
    return b.requireSchema(requireSchema);
  }

  /**
   * {@code converge.consumer.rocketmq.*}.
   *
   * @param nameServer name server list; required when a consumer is declared
   * @param consumeThreads threads per consumer; default 4
   * @param consumeTimeout how long a message may be in the handler (e.g. waiting out a database or broker
   *     outage) before RocketMQ redelivers a second copy; 1m..7d, default 24h
   * @param ordered one key handled in queue order (an orderly consumer); default true. {@code false} is the
   *     explicit opt-out to a concurrent consumer: no per-key order
   * @param suspendTime ordered only: how long a queue pauses before a message that could not be acked comes
   *     again; 10ms..30s, default 1s
   * @param releaseInterval how often the consumer runs the messages held behind a parked message of their key
   *     once it was discarded; 10ms..1h, default 5s
   */
  public record Rocketmq(String nameServer, @DefaultValue("4") int consumeThreads,
      @DefaultValue("24h") Duration consumeTimeout, @DefaultValue("true") boolean ordered,
      @DefaultValue("1s") Duration suspendTime, @DefaultValue("5s") Duration releaseInterval) {
  }

  /**
   * {@code converge.consumer.policies.<name>.*}; defaults are {@link FailurePolicy#defaults()}'s.
   *
   * @param maxAttempts default 3
   * @param initialBackoff default 200ms
   * @param maxBackoff default 10s
   * @param multiplier default 2.0
   * @param jitter default 0.2
   * @param maxOutageBackoff the cap of the backoff while the database or a broker is unavailable (no
   *     attempt is counted then); default 30s
   */
  public record Policy(@DefaultValue("3") int maxAttempts, @DefaultValue("200ms") Duration initialBackoff,
      @DefaultValue("10s") Duration maxBackoff, @DefaultValue("2.0") double multiplier,
      @DefaultValue("0.2") double jitter,
      @DefaultValue("30s") Duration maxOutageBackoff) {

    FailurePolicy toFailurePolicy(String name) {
      try {
        return new FailurePolicy(maxAttempts, initialBackoff, maxBackoff, multiplier, jitter, maxOutageBackoff);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("converge.consumer.policies." + name + ": " + e.getMessage(), e);
      }
    }
  }

  /**
   * {@code converge.consumer.dedup.*}.
   *
   * @param retention how long dedup rows are kept; default 7d, at least 6h
   * @param purgeBatchSize rows per purge batch; default 1000
   * @param purgeInterval time between purges; default 10m
   */
  public record Dedup(@DefaultValue("7d") Duration retention, @DefaultValue("1000") int purgeBatchSize,
      @DefaultValue("10m") Duration purgeInterval) {
  }

  FailurePolicy policy(String name) {
    Policy p = policies == null ? null : policies.get(name);
    if (p == null && policies != null) {
      p = policies.get("default");
    }
    return p == null ? FailurePolicy.defaults() : p.toFailurePolicy(name);
  }
}
