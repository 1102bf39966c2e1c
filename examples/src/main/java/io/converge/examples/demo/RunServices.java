package io.converge.examples.demo;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.examples.events.Topics;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What the saga's services share however they run ({@link SagaServices} in this JVM, {@link ServiceProcesses} as
 * processes): the run's topic names, suffixed with {@code -<run>}, and one schema per service, named
 * {@code <service>_<run>}, so that several runs share one broker and one database. Schemas are made while the services
 * start, before any other thread reads them.
 */
abstract class RunServices implements Services {

  private final Topics topics;
  private final Map<String, DataSource> databases = new LinkedHashMap<>();
  private final String run;

  RunServices(String run) {
    this.run = run;
    this.topics = new Topics("-" + run);
  }

  /** Makes the schema of service {@code name} in {@code pg}; from now on it is {@link #db(String) db(name)}. */
  final DataSource newSchema(ConvergePostgres pg, String name) {
    DataSource db = pg.newSchema(name + "_" + run.replace('-', '_'));
    databases.put(name, db);
    return db;
  }

  @Override
  public final Topics topics() {
    return topics;
  }

  @Override
  public final DataSource db(String name) {
    return databases.get(name);
  }
}
