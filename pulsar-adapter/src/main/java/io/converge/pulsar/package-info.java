/**
 * The Pulsar-transactions backend of {@link io.converge.producer.TxnProducer}:
 * {@link io.converge.pulsar.PulsarBackend}. Its tables are created by the migrations of module
 * {@code pulsar} ({@code Migrations.apply(dataSource, "pulsar")}), next to those of {@code producer}.
 */
package io.converge.pulsar;
