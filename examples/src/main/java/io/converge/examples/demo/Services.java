package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.examples.events.Topics;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The five services of the saga as a run sees them, wherever they run: in this JVM ({@link SagaServices}) or as
 * separate processes ({@link ServiceProcesses}). Closing stops them.
 */
public interface Services extends AutoCloseable {

  /** Starts the services of a run. */
  @FunctionalInterface
  interface Starter {

    /**
     * Starts every service on {@code backend}: schemas in {@code pg}, topics suffixed with {@code run}.
     *
     * @param transport the broker properties of the backend ({@code converge.*}) and any other
     */
    Services start(Backend backend, ConvergePostgres pg, String run, Map<String, String> transport)
        throws Exception;
  }

  /** The topic names of this run. */
  Topics topics();

  /** The database of service {@code name}, reached directly (not through any proxy). */
  DataSource db(String name);

  /** The HTTP port of service {@code name}. */
  int port(String name);

  /** The sum over all services of Converge's {@code consumer.<what>} counters, e.g. {@code duplicates}. */
  long consumerCount(String what);

  @Override
  void close();
}
