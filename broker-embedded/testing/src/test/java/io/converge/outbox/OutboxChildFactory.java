package io.converge.outbox;

import io.converge.producer.TxnProducer;
import io.converge.core.Migrations;
import io.converge.testing.ChildProducerFactory;
import java.util.Map;
import javax.sql.DataSource;

/** Builds the outbox producer under test, in the parent and in the crash tests' child JVM alike. */
public final class OutboxChildFactory implements ChildProducerFactory {

  @Override
  public TxnProducer create(String group, String topic, DataSource db, Map<String, String> env) {
    Migrations.apply(db, "outbox");
    return producer(group, topic, db);
  }

  /** The producer, on a database that has the migrations already. */
  static TxnProducer producer(String group, String topic, DataSource db) {
    return TxnProducer.builder().group(group).dataSource(db).backend(OutboxBackend.outbox()).topics(topic).build();
  }
}
