package io.converge.outbox;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.converge.broker.junit.TypedParameterResolver;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.broker.rocketmq.EmbeddedRocketMQ;
import io.converge.broker.rocketmq.RocketMQExtension;
import io.converge.outbox.cdc.CdcRelay;
import io.converge.outbox.rocketmq.RocketMQSink;
import io.converge.outbox.spi.OutboxSink;
import io.converge.producer.TxnProducer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;

/**
 * The world of one relay test: a fresh outbox schema ({@link RelayFixture#newOutbox()}), a unique topic
 * created on the embedded RocketMQ, a consumer recording that topic and an outbox producer. Test methods
 * of a class extended with {@link Extension} take it as a parameter; it is closed after the test, with
 * whatever the test handed to {@link #closeLater}.
 */
public final class RelayBed implements AutoCloseable {

  /** The broker (shared by the JVM's tests). */
  public final EmbeddedRocketMQ mq;
  /** The outbox's database, on the bed's own schema. */
  public final DataSource ds;
  /** The name of that schema. */
  public final String schema;
  /** A topic of this test, created. */
  public final String topic;
  /** What consumers of {@link #topic} received. */
  public final Deliveries deliveries;
  /** An outbox producer on {@link #ds}. */
  public final TxnProducer producer;
  private final List<AutoCloseable> closeLater = new ArrayList<>();

  private RelayBed(EmbeddedRocketMQ mq, String prefix) throws Exception {
    this.mq = mq;
    this.ds = RelayFixture.newOutbox();
    this.schema = RelayFixture.string(ds, "SELECT current_schema()");
    this.topic = RocketMQExtension.uniqueTopic(prefix);
    mq.createTopic(topic);
    this.deliveries = new Deliveries(mq, topic);
    this.producer = RelayFixture.producer(ds);
  }

  /** Commits one message of {@code key} on the bed's topic (its key as payload) and returns its id. */
  public String publish(String key) {
    return RelayFixture.publish(producer, topic, key, key.getBytes(UTF_8));
  }

  /** Commits one message of {@code key} with {@code payload} on the bed's topic and returns its id. */
  public String publish(String key, byte[] payload) {
    return RelayFixture.publish(producer, topic, key, payload);
  }

  /** A RocketMQ sink builder of a new group on the bed's broker. */
  public RocketMQSink.Builder sink() {
    return RelayFixture.sink(mq);
  }

  /** A polling relay builder on the bed's outbox with a short outage backoff. */
  public OutboxRelayBuilder relay(OutboxSink sink) {
    return RelayFixture.relay(ds, sink);
  }

  /** A CDC relay builder named {@code name} on the bed's schema of the shared PostgreSQL. */
  public CdcRelay.Builder cdc(String name) {
    ConvergePostgres pg = ConvergePostgres.shared();
    return CdcRelay.builder().name(name).jdbcUrl(pg.jdbcUrl(), pg.user(), pg.password()).schema(schema);
  }

  /** A name unique to this call: {@code prefix_} and 8 hex digits (a valid CDC relay name). */
  public static String uniqueName(String prefix) {
    return prefix + "_" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** The first column of the first row of {@code sql}, as a long. */
  public long scalar(String sql) throws Exception {
    return RelayFixture.scalar(ds, sql);
  }

  /** Unpublished and published outbox rows {@code where}. */
  public long count(String where) throws Exception {
    return RelayFixture.count(ds, where);
  }

  /** {@code resource} is closed with the bed (before the producer and the consumer), last given first. */
  public <T extends AutoCloseable> T closeLater(T resource) {
    closeLater.add(0, resource);
    return resource;
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable c : closeLater) {
      c.close();
    }
    producer.close();
    deliveries.close();
  }

  /** Resolves {@link RelayBed} parameters (a new bed per test method) and closes them after the test. */
  public static final class Extension extends TypedParameterResolver<RelayBed> {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RelayBed.class);

    /** Created by JUnit. */
    public Extension() {
      super(RelayBed.class, Extension::bed);
    }

    private static RelayBed bed(ParameterContext parameter, ExtensionContext context) {
      String prefix = context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT).replace("it", "");
      return context.getStore(NAMESPACE).getOrComputeIfAbsent(parameter.getIndex(), k -> {
        try {
          return new RelayBed(RocketMQExtension.server(context), prefix.isEmpty() ? "bed" : prefix);
        } catch (Exception e) {
          throw new IllegalStateException("Cannot set up the relay test bed", e);
        }
      }, RelayBed.class); // JUnit closes the AutoCloseable values of the test's store after it
    }
  }
}
