/**
 * The contract tests of Converge's SPIs, for a backend, a sink or a binding to prove itself against real servers:
 * {@link io.converge.testing.TxnProducerContract} (every {@code TxnProducer} backend;
 * {@link io.converge.testing.RocketMQContract} when its messages arrive on the embedded RocketMQ),
 * {@link io.converge.testing.OutboxSinkContract} (every {@code OutboxSink}) and
 * {@link io.converge.testing.ConsumerBindingContract} (every consumer binding). A test class extends one, registers
 * its broker's JUnit 5 extension (converge-broker-embedded) and implements the hooks; it overrides no test.
 * Artifact {@code io.converge:converge-testing}, added with test scope; no library module depends on it.
 */
package io.converge.testing;
