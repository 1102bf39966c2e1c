package io.converge.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's logging (logback-demo.xml, rmq.logback-demo.xml): the console shows the ERRORs of our own code and
 * nothing else; the brokers', clients' and frameworks' noise, and our own INFO and WARN, go to the log file.
 */
class DemoLoggingTest {

  private final PrintStream stderr = System.err;
  private final ByteArrayOutputStream console = new ByteArrayOutputStream();

  @TempDir
  Path dir;

  @BeforeEach
  void captureConsole() {
    System.setErr(new PrintStream(console, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restoreConsole() {
    System.setErr(stderr);
  }

  @Test
  void ourErrorsReachTheConsoleAndEverythingElseOnlyTheFile() throws Exception {
    Path file = dir.resolve("demo.log");
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(new LogbackMDCAdapter());
    DemoLogging.configure(context, file);

    context.getLogger("io.converge.examples.order.OrderService").error("order o-1 cannot be stored",
        new IllegalStateException("our own failure"));
    context.getLogger("io.converge.consumer.IdempotentHandler").warn("a retried delivery, expected in the demo");
    context.getLogger("io.converge.outbox.Relay").info("relay started");
    context.getLogger("org.apache.pulsar.client.impl.ConsumerImpl").error("reconnect failed",
        new IllegalStateException("closed"));
    context.getLogger("org.springframework.boot.SpringApplication").warn("framework warning");
    context.getLogger("org.hibernate.SQL").info("select ...");
    context.stop();

    String shown = console.toString(StandardCharsets.UTF_8);
    String logged = Files.readString(file);
    assertThat(shown).contains("ERROR", "order o-1 cannot be stored", "our own failure")
        .doesNotContain("a retried delivery", "relay started", "reconnect failed", "framework warning");
    assertThat(logged).contains("order o-1 cannot be stored", "our own failure", "a retried delivery",
        "relay started", "reconnect failed", "framework warning").doesNotContain("select ...");
  }

  @Test
  void rocketMQsOwnLogbackWritesOnlyToTheFile() throws Exception {
    Path file = dir.resolve("demo.log");
    // RocketMQ logs through its shaded Logback, configured by rmq.logback-demo.xml (rmq.logback.configurationFile)
    var context = new org.apache.rocketmq.logging.ch.qos.logback.classic.LoggerContext();
    context.putProperty(DemoLogging.FILE_PROPERTY, file.toString());
    var configurator = new org.apache.rocketmq.logging.ch.qos.logback.classic.joran.JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(DemoLogging.class.getResource("/rmq.logback-demo.xml"));

    context.getLogger("RocketmqBroker").error("processRequestWrapper response to /127.0.0.1:44198 failed",
        new IllegalStateException("StacklessClosedChannelException"));
    context.getLogger("RocketmqRemoting").warn("channel closed");
    context.stop();

    assertThat(console.toString(StandardCharsets.UTF_8)).doesNotContain("processRequestWrapper", "channel closed");
    assertThat(Files.readString(file)).contains("[rocketmq]", "processRequestWrapper response", "channel closed");
  }
}
