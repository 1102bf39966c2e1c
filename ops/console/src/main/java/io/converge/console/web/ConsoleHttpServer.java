package io.converge.console.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Serves a {@link Console} with the JDK's HTTP server (what {@code converge console} runs): at the root of
 * the address, every decision recorded as one operator. Bind it to the loopback interface unless the host is
 * protected otherwise: the console has no login. Bound to loopback, it refuses a request carrying a forwarding
 * header ({@code Forwarded}, {@code X-Forwarded-For}, {@code X-Forwarded-Host}, {@code X-Real-IP}): a proxy on
 * this host would make other hosts' requests act as the operator. {@link #close()} stops it. Thread-safe.
 */
public final class ConsoleHttpServer implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService executor;

  private ConsoleHttpServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Starts serving {@code console} on {@code address} (port 0: a free one), every action recorded as
   * {@code operator}.
   *
   * @throws UncheckedIOException when the address cannot be bound
   */
  public static ConsoleHttpServer start(Console console, InetSocketAddress address, String operator) {
    Objects.requireNonNull(console, "console");
    HttpServer server;
    try {
      server = HttpServer.create(address, 50);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot serve the console on " + address, e);
    }
    ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "converge-console");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    boolean loopbackOnly = address.getAddress() == null || address.getAddress().isLoopbackAddress();
    server.createContext("/", exchange -> serve(console, exchange, operator, loopbackOnly));
    server.start();
    return new ConsoleHttpServer(server, executor);
  }

  /** The bound address (its port when started on port 0). */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /** The console's URL, {@code http://host:port/}. */
  public String url() {
    InetSocketAddress a = address();
    String host = a.getAddress().getHostAddress();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/";
  }

  private static void serve(Console console, HttpExchange exchange, String operator, boolean loopbackOnly)
      throws IOException {
    try (exchange) {
      var headers = exchange.getRequestHeaders();
      String refused = SameOrigin.refusal(exchange.getRequestMethod(), headers.getFirst("Host"),
          headers.getFirst("Origin"), headers.getFirst("Sec-Fetch-Site"), loopbackOnly);
      String forwarded = loopbackOnly ? ServletAccess.forwardingHeader(headers::getFirst) : null;
      if (refused == null && forwarded != null) {
        refused = "The Converge console serves this host only: a request through a proxy (" + forwarded
            + ") is not local";
      }
      if (refused != null) {
        send(exchange, 403, "<!DOCTYPE html><p>" + Html.escape(refused) + "</p>");
        return;
      }
      Map<String, String> params = new HashMap<>();
      FormData.decode(exchange.getRequestURI().getRawQuery(), params);
      if ("POST".equals(exchange.getRequestMethod())) {
        try (InputStream in = exchange.getRequestBody()) {
          byte[] body = in.readNBytes(FormData.MAX_BYTES + 1);
          if (body.length > FormData.MAX_BYTES) {
            send(exchange, 413, "<!DOCTYPE html><p>Form too large</p>");
            return;
          }
          Map<String, String> form = new HashMap<>();
          FormData.decode(new String(body, StandardCharsets.UTF_8), form);
          params.putAll(form);
        }
      }
      ConsoleResponse response = console.handle(
          new ConsoleRequest(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), params, operator));
      send(exchange, response.status(), response.html());
    }
  }

  private static void send(HttpExchange exchange, int status, String html) throws IOException {
    byte[] bytes = html.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", ConsoleResponse.CONTENT_TYPE);
    ConsoleResponse.HEADERS.forEach(exchange.getResponseHeaders()::set);
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  /** Stops serving (requests in progress get up to one second). */
  @Override
  public void close() {
    server.stop(1);
    executor.shutdownNow();
  }
}
