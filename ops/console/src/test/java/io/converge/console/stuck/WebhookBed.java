package io.converge.console.stuck;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;

/**
 * The stuck tests' bed: a schema of the shared embedded PostgreSQL with the {@code consumer} and {@code stuck}
 * migrations, and a real local HTTP server standing in for the webhook (contexts added with {@link #on}).
 */
final class WebhookBed implements AutoCloseable {

  /** The schema's data source. */
  final DataSource ds;
  private final HttpServer server;
  private final ExecutorService threads = Executors.newFixedThreadPool(4);

  WebhookBed(String schema) throws IOException {
    ds = ConvergePostgres.shared().newSchema(schema);
    Migrations.apply(ds, "consumer");
    Migrations.apply(ds, "stuck");
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(threads);
    server.start();
  }

  /** Answers the requests to {@code path} with {@code handler}. */
  WebhookBed on(String path, HttpHandler handler) {
    server.createContext(path, handler);
    return this;
  }

  /** A webhook builder on this schema that posts to {@code path} of the local server. */
  StuckWebhook.Builder webhook(String path) {
    return StuckWebhook.builder().dataSource(ds)
        .url(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path));
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
