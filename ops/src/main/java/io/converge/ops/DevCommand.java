package io.converge.ops;

import io.converge.broker.DevPlatform;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code converge dev}: the embedded servers for local development, until Ctrl-C. */
@Command(name = "dev", mixinStandardHelpOptions = true, description = "Starts RocketMQ (name server + broker) and PostgreSQL, and Pulsar with --pulsar; "
    + "prints their addresses and a JDBC URL; stops cleanly on Ctrl-C.")
final class DevCommand implements Callable<Integer> {

  @Option(names = "--pulsar", description = "also start Pulsar (a child JVM, 12-45 s)")
  boolean pulsar;

  @Override
  public Integer call() throws Exception {
    DevPlatform.main(pulsar ? new String[]{"--pulsar"} : new String[0]);
    return 0;
  }
}
