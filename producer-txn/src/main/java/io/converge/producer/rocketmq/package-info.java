/**
 * The RocketMQ half-message backend of {@code TxnProducer} ({@link io.converge.producer.rocketmq.RocketMQBackend},
 * the only API type here), built on the shared RocketMQ client layer of converge-core
 * ({@code io.converge.core.rocketmq}: settings, clients, queue selector, message mapping, error classification).
 *
 * <p>The other public types are <b>Converge-internal</b>: they are public only so that the examples and the
 * bench share them; they are not an API for applications and may change between minor versions:
 *
 * <ul>
 *   <li>{@link io.converge.producer.rocketmq.OutgoingMessages}: an {@code OutgoingMessage} as a RocketMQ
 *       message (on {@link io.converge.core.rocketmq.RocketMQMessages}).
 * </ul>
 *
 * <p>All of them but {@code RocketMQBackend} need {@code org.apache.rocketmq:rocketmq-client}, an optional
 * dependency: call {@link io.converge.core.rocketmq.RocketMQSettings#requireClient(String)} before loading
 * them.
 */
package io.converge.producer.rocketmq;
