package io.converge.ops.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The Pulsar checks of {@code converge doctor}, over the broker's admin REST API: transactions enabled (with system
 * topics), coordinators assigned and ready, the topics present; and with the service URL, that a transactional client
 * connects to every coordinator. Reads only. Not
 * thread-safe.
 */
final class PulsarDoctor {

  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final String ASSIGN = "/admin/v2/persistent/pulsar/system/transaction_coordinator_assign/partitions";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String INITIALISE = "initialise them: bin/pulsar initialize-transaction-coordinator-metadata "
      + "-cs ZK -c CLUSTER --initial-num-transaction-coordinators 16, then restart the brokers";

  private final String serviceUrl;
  private final String adminUrl;
  private final List<String> topics;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT)
      .followRedirects(HttpClient.Redirect.NORMAL).build();

  PulsarDoctor(String serviceUrl, String adminUrl, List<String> topics) {
    this.serviceUrl = serviceUrl;
    this.adminUrl = adminUrl == null ? null : adminUrl.replaceAll("/+$", "");
    this.topics = topics;
  }

  /** Runs the checks, reporting each finding to {@code out}. */
  void run(Consumer<Finding> out) {
    if (serviceUrl != null) {
      service(out);
    }
    if (adminUrl == null) {
      return;
    }
    JsonNode config;
    try {
      config = get("/admin/v2/brokers/configuration/runtime");
    } catch (IOException e) {
      out.accept(Finding.fail("pulsar.admin", "admin API " + adminUrl + " did not answer: " + e.getMessage(),
          "check --pulsar-admin-url (the broker's webServicePort, e.g. http://host:8080)"));
      return;
    }
    out.accept(Finding.pass("pulsar.admin", "admin API " + adminUrl));
    PulsarRules.settings(config, out);
    if ("true".equals(config.path("transactionCoordinatorEnabled").asText())) {
      coordinators(out);
    }
    for (String topic : topics) {
      topic(topic, out);
    }
  }

  private void service(Consumer<Finding> out) {
    URI uri = URI.create(serviceUrl.replaceFirst("^pulsar(\\+ssl)?://", "tcp://"));
    int port = uri.getPort() > 0 ? uri.getPort() : 6650;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(uri.getHost(), port), (int) TIMEOUT.toMillis());
      out.accept(Finding.pass("pulsar.service", "service URL " + serviceUrl + " accepts connections"));
    } catch (IOException | IllegalArgumentException e) {
      out.accept(Finding.fail("pulsar.service", "service URL " + serviceUrl + ": " + e.getMessage(),
          "check --pulsar-url (pulsar://host:6650) and that the brokers run"));
    }
  }

  /**
   * Each coordinator is a partition of the assign topic that one broker owns. A coordinator loads when a
   * transactional client first connects to it: with the service URL, a transactional client connects to every one
   * (what each Converge producer does at start); their stats then say whether they are ready.
   */
  private void coordinators(Consumer<Finding> out) {
    int partitions;
    try {
      partitions = get(ASSIGN).path("partitions").asInt(0);
    } catch (IOException e) {
      out.accept(Finding.fail("pulsar.coordinators", "coordinators unreadable: " + e.getMessage(), INITIALISE));
      return;
    }
    if (partitions > 0 && serviceUrl != null) {
      try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).enableTransaction(true)
          .operationTimeout((int) TIMEOUT.toSeconds(), TimeUnit.SECONDS).build()) {
        out.accept(Finding.pass("pulsar.coordinators.connect", "a transactional client connected to the "
            + partitions + " coordinators"));
      } catch (PulsarClientException e) {
        out.accept(Finding.fail("pulsar.coordinators.connect", "a transactional client cannot connect to the "
            + "coordinators: " + e.getClass().getSimpleName() + ": " + e.getMessage(),
            "check the brokers' logs for "
                + "the coordinators' recovery (after a restart: apache/pulsar#20851); unload namespace pulsar/system"));
        return;
      }
    }
    JsonNode stats;
    try {
      stats = get("/admin/v3/transactions/coordinatorStats");
    } catch (IOException e) {
      if (serviceUrl == null && e.getMessage().contains("Transaction coordinator not found")) {
        out.accept(Finding.warn("pulsar.coordinators", partitions + " coordinators assigned, not loaded: they load "
            + "when a transactional client first connects",
            "run converge doctor with --pulsar-url too: it connects one"));
      } else {
        out.accept(Finding.fail("pulsar.coordinators", "coordinators unreadable: " + e.getMessage(), INITIALISE));
      }
      return;
    }
    PulsarRules.coordinators(partitions, stats, out);
  }

  private void topic(String topic, Consumer<Finding> out) {
    String full = topic.contains("://") ? topic : "persistent://public/default/" + topic;
    String path = full.replace("://", "/");
    String check = "pulsar.topic." + full.substring(full.lastIndexOf('/') + 1);
    try {
      JsonNode metadata = getOrNull("/admin/v2/" + path + "/partitions");
      int partitions = metadata == null ? 0 : metadata.path("partitions").asInt(0);
      if (partitions > 0) {
        out.accept(Finding.pass(check, full + ": partitioned, " + partitions + " partitions"));
        return;
      }
      String namespace = path.substring(0, path.lastIndexOf('/'));
      for (JsonNode t : get("/admin/v2/" + namespace)) {
        if (t.asText().equals(full)) {
          out.accept(Finding.pass(check, full + ": exists (not partitioned)"));
          return;
        }
      }
      out.accept(Finding.fail(check, full + " does not exist: sends to it fail when auto-creation is off",
          "bin/pulsar-admin topics create-partitioned-topic " + full + " -p N (or topics create " + full + ")"));
    } catch (IOException e) {
      out.accept(
          Finding.fail(check, full + " unreadable: " + e.getMessage(), "check the topic name and the admin URL"));
    }
  }

  private JsonNode get(String path) throws IOException {
    JsonNode found = getOrNull(path);
    if (found == null) {
      throw new IOException("GET " + path + " answered HTTP 404");
    }
    return found;
  }

  /** The JSON answer, null on 404. */
  private JsonNode getOrNull(String path) throws IOException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(adminUrl + path)).timeout(TIMEOUT)
        .header("Accept", "application/json").GET().build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    if (response.statusCode() == 404) {
      return null;
    }
    if (response.statusCode() / 100 != 2) {
      String body = response.body().replaceAll("\\s+", " ");
      throw new IOException("GET " + path + " answered HTTP " + response.statusCode() + " "
          + body.substring(0, Math.min(body.length(), 200)));
    }
    return JSON.readTree(response.body());
  }
}
