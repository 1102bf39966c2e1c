package io.converge.examples.demo;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * The demo's console is the report a person reads: {@link #toFile} sends the logs of the servers, the clients and
 * the services to a file (logback-demo.xml, and rmq.logback-demo.xml for RocketMQ's own Logback) and keeps on the
 * console only the ERRORs of our own code ({@code io.converge.*}). Called first in {@code main}, before anything
 * logs; the Spring Boot services take the same configuration ({@code logging.config}).
 */
public final class DemoLogging {

  /** The system property naming the log file; default {@code converge-demo.log} in the temporary directory. */
  public static final String FILE_PROPERTY = "converge.demo.log";

  private DemoLogging() {
  }

  /** Sends the logs to the file (emptied first) and returns its absolute path, to be printed. */
  public static Path toFile() {
    Path file = Path.of(System.getProperty(FILE_PROPERTY,
        Path.of(System.getProperty("java.io.tmpdir"), "converge-demo.log").toString())).toAbsolutePath();
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot empty the demo's log file " + file, e);
    }
    System.setProperty(FILE_PROPERTY, file.toString());
    System.setProperty("rmq.logback.configurationFile", "rmq.logback-demo.xml");
    System.setProperty("logging.config", "classpath:logback-demo.xml");
    configure((LoggerContext) LoggerFactory.getILoggerFactory(), file);
    return file;
  }

  /** Configures {@code context} with logback-demo.xml, writing to {@code file}. */
  static void configure(LoggerContext context, Path file) {
    context.reset();
    context.putProperty(FILE_PROPERTY, file.toString());
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    try {
      configurator.doConfigure(DemoLogging.class.getResource("/logback-demo.xml"));
    } catch (JoranException e) {
      throw new IllegalStateException("logback-demo.xml is broken", e);
    }
  }
}
