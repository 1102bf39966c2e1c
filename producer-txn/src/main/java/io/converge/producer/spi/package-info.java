/**
 * The service-provider interface of {@link io.converge.producer.TxnProducer} backends: a
 * {@link io.converge.producer.spi.BackendFactory} creates a {@link io.converge.producer.spi.TxnBackend},
 * which opens one {@link io.converge.producer.spi.BackendTransaction} per unit of work. The shared
 * transaction log ({@link io.converge.producer.internal.TxnLog}, table {@code converge_txn_log}, an
 * implementation class handed to backends in {@link io.converge.producer.spi.BackendContext}, not a
 * contract) records the outcome of each message so that any instance can recover for a dead one.
 * This package holds only contracts: interfaces and records. Backends: RocketMQ
 * half messages (this module), Pulsar transactions and the transactional outbox (their modules).
 *
 * <p>A producer that can join a transaction opened and ended by someone else (Spring's
 * {@code TransactionalPublisher}) is a {@link io.converge.producer.spi.JoinableProducer}; the joined
 * transaction, a {@link io.converge.producer.spi.JoinedTransaction}, is told of the transaction's end.
 */
package io.converge.producer.spi;
