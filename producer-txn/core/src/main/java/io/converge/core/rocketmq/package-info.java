/**
 * The one RocketMQ client layer every Converge module uses (the producer's half-message backend, the outbox
 * sink, the consumer binding, the examples and the bench).
 *
 * <p>Its types are <b>Converge-internal</b>: they are public only so that those modules share them; they are
 * not an API for applications and may change between minor versions:
 *
 * <ul>
 *   <li>{@link io.converge.core.rocketmq.RocketMQSettings}: validation of the shared settings and the
 *       check that the optional {@code rocketmq-client} is present (it touches no RocketMQ type);
 *   <li>{@link io.converge.core.rocketmq.RocketMQClients}: producer and push-consumer set-up (name
 *       server, group, instance, timeouts, retries, start, shutdown on a failed start);
 *   <li>{@link io.converge.core.rocketmq.KeyQueueSelector}: one key, one queue;
 *   <li>{@link io.converge.core.rocketmq.RocketMQMessages}: message &lt;-&gt; envelope (Converge
 *       headers as user properties, keys, body);
 *   <li>{@link io.converge.core.rocketmq.RocketMQErrors}: the one classification of a failure as a
 *       refusal of the message or an outage, including the one rule for "no route".
 * </ul>
 *
 * <p>All of them but {@code RocketMQSettings} need {@code org.apache.rocketmq:rocketmq-client}, an optional
 * dependency: call {@link io.converge.core.rocketmq.RocketMQSettings#requireClient(String)} before loading
 * them.
 */
package io.converge.core.rocketmq;
