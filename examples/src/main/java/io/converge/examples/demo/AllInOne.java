package io.converge.examples.demo;

import io.converge.broker.DevPlatform;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * The five services on the embedded servers in one process, left running for manual requests
 * (order on port 8081, payment on 8085), until the process is stopped. Argument: the backend,
 * default {@code rocketmq}.
 */
public final class AllInOne {

  private AllInOne() {
  }

  public static void main(String[] args) throws Exception {
    Backend backend = Backend.parse(args.length > 0 ? args[0] : "rocketmq");
    Path log = DemoLogging.toFile();
    DevPlatform platform = DevPlatform.builder().fastTransactionChecks().start();
    String run = backend.mode() + "-" + UUID.randomUUID().toString().substring(0, 6);
    Map<String, String> transport = Transport.properties(platform, backend, run);
    SagaServices services = SagaServices.start(backend, platform.postgres(), run, transport, true);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      services.close();
      platform.close();
    }, "converge-examples-shutdown"));
    platform.describe(System.out);
    System.out.println("The servers' and clients' logs: " + log + " (here: errors of Converge and the services only)");
    System.out.println("Services up on backend " + backend.mode() + ": order http://127.0.0.1:" + services.port("order")
        + "/orders, payment http://127.0.0.1:" + services.port("payment") + "/charges; topics end in "
        + services.topics().suffix() + ". Seed stock and accounts in the inventory and account schemas. Ctrl-C stops.");
    Thread.currentThread().join();
  }
}
