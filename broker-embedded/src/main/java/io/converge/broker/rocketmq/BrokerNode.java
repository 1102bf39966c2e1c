package io.converge.broker.rocketmq;

import io.converge.broker.internal.Poll;
import io.converge.broker.Dirs;
import io.converge.broker.EmbeddedServerException;
import io.converge.broker.Ports;
import io.converge.broker.internal.Processes;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.rocketmq.broker.BrokerController;

/**
 * One broker of an {@link EmbeddedRocketMQCluster}: its configuration file, its store and ports (chosen
 * once, kept across restarts) and its current JVM ({@link BrokerChildMain}), or, for a broker that a test
 * only stops, its controller in this JVM (cheaper: no JVM start, classes shared). Guarded by the cluster's
 * lock.
 */
final class BrokerNode {

  private final String name;
  private final String file;
  private final Properties config;
  private final Path dir;
  private final int port;
  private final int haPort;
  private final boolean inThisJvm;
  private final List<Path> logs = new ArrayList<>();
  private Process process;
  private BrokerController controller;

  BrokerNode(String name, String file, Properties config, Path dir, boolean inThisJvm) {
    this.name = name;
    this.inThisJvm = inThisJvm;
    this.file = file;
    this.config = config;
    this.dir = dir;
    this.port = Ports.freeWithCompanion(2);
    this.haPort = Ports.free();
  }

  String name() {
    return name;
  }

  Path dir() {
    return dir;
  }

  int port() {
    return port;
  }

  int haPort() {
    return haPort;
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  String brokerName() {
    return config.getProperty("brokerName", "DEFAULT_BROKER");
  }

  /** Whether the file starts the broker in controller mode (the controller assigns its role and id). */
  boolean controllerMode() {
    return Boolean.parseBoolean(config.getProperty("enableControllerMode", "false"));
  }

  /** The broker id the file gives (0 for a master, more for a slave); not used in controller mode. */
  long brokerId() {
    return "SLAVE".equals(config.getProperty("brokerRole")) ? Long.parseLong(config.getProperty("brokerId", "1")) : 0;
  }

  boolean isRunning() {
    return inThisJvm ? controller != null : process != null && process.isAlive();
  }

  boolean inThisJvm() {
    return inThisJvm;
  }

  /** Writes the file with {@code overrides} appended (a later key wins) and starts a broker JVM on it. */
  void launch(Map<String, String> overrides) {
    Ports.requireFree(port, "RocketMQ broker " + name);
    Ports.requireFree(port - 2, "RocketMQ broker " + name + " (fast channel = listen port - 2)");
    Ports.requireFree(haPort, "RocketMQ broker " + name + " (HA)");
    Dirs.requireWritable(dir, "RocketMQ broker " + name);
    StringBuilder text = new StringBuilder("# ops/deploy/rocketmq/" + file + "\n");
    config.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
    text.append("# overridden by EmbeddedRocketMQCluster\n");
    overrides.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
    try {
      Path conf = Files.writeString(dir.resolve("broker.conf"), text);
      if (inThisJvm) {
        controller = BrokerChildMain.start(conf.toString());
        return;
      }
      Path log = dir.resolve("broker-" + (logs.size() + 1) + ".log");
      logs.add(log);
      List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          // no TLS on loopback: its permissive default makes a self-signed RSA certificate at start (seconds)
          "-Dtls.server.mode=disabled", "-Duser.home=" + dir,
          "-cp", System.getProperty("java.class.path"), BrokerChildMain.class.getName(), conf.toString());
      process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (EmbeddedServerException e) {
      throw e;
    } catch (Exception e) {
      throw new EmbeddedServerException("Cannot start RocketMQ broker " + name + " in " + dir, e);
    }
  }

  /** Waits for the current JVM's start line. */
  void awaitStarted(Duration timeout) {
    if (inThisJvm) {
      return; // started by launch
    }
    Path log = logs.get(logs.size() - 1);
    Poll.until(timeout, Poll.EVERY, () -> {
      boolean exited = !process.isAlive();
      if (read(log).contains(BrokerChildMain.STARTED)) {
        return true;
      }
      if (exited) {
        throw notStarted(log, ": its JVM exited with " + process.exitValue());
      }
      return false;
    }, () -> notStarted(log, " within " + timeout),
        e -> new EmbeddedServerException("Interrupted waiting for RocketMQ broker " + name, e));
  }

  private EmbeddedServerException notStarted(Path log, String why) {
    return new EmbeddedServerException("RocketMQ broker " + name + " (ops/deploy/rocketmq/" + file + ") did not start"
        + why + "; output:\n" + read(log));
  }

  /** Sends {@code command} ({@code stop} or {@code halt}) and waits for the JVM's end; kills it after 30 s. */
  void end(String command) {
    if (!isRunning()) {
      return;
    }
    if (inThisJvm) {
      BrokerLauncher.shutdown(controller); // a stop: a broker in this JVM cannot be killed
      controller = null;
      return;
    }
    try {
      OutputStream in = process.getOutputStream();
      in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    } catch (IOException e) {
      // the JVM is ending already
    }
    Processes.awaitOrKill(process, Duration.ofSeconds(30), Duration.ofSeconds(10));
  }

  /** The output of every JVM of this node, oldest first. */
  String output() {
    StringBuilder s = new StringBuilder();
    for (Path log : logs) {
      s.append("--- ").append(log.getFileName()).append("\n").append(read(log));
    }
    return s.toString();
  }

  private static String read(Path log) {
    try {
      return Files.exists(log) ? Files.readString(log) : "";
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }
}
