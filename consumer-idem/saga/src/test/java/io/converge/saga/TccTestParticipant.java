package io.converge.saga;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.converge.consumer.IncomingMessage;
import io.converge.core.Envelope;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.TxnProducer;
import io.converge.saga.tcc.TccHeaders;
import io.converge.saga.tcc.TccOperation;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import javax.sql.DataSource;

/**
 * A TCC participant written for the tests (not the module's {@code TccBarrier}): a barrier table with inserts only
 * ({@code ON CONFLICT DO NOTHING}), a Cancel that takes the Try's row first (an empty rollback; a later Try is refused
 * as hanging), answering saga commands (messages) and the HTTP protocol of the README. Every call is recorded in
 * {@code tcc_calls} as {@code global branch op outcome}. A script per (global, branch, op) makes the next calls
 * fail: {@code FAIL} (technical), {@code REFUSE} (business), {@code 503} or {@code 404} (HTTP only), {@code SLOW:<ms>} (sleeps first).
 * Thread-safe.
 */
final class TccTestParticipant implements AutoCloseable {

  /** What the barrier did. */
  enum Result {
    RAN, DUPLICATE, EMPTY_ROLLBACK, HANGING_REFUSED, REFUSED, FAILED
  }

  static final String REPLIES = "tcc-replies";

  private final DataSource ds;
  private final TxnProducer producer;
  private final Map<String, Deque<String>> script = new ConcurrentHashMap<>();
  /** What the HTTP server received: {@code path op global branch tenant content-type}. */
  final List<String> requests = new CopyOnWriteArrayList<>();
  private HttpServer server;

  TccTestParticipant(DataSource ds, TxnProducer producer) {
    this.ds = ds;
    this.producer = producer;
  }

  static void migrate(DataSource ds) throws Exception {
    Migrations.apply(ds);
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE tcc_test_barrier (global_id text, branch_id text, op text, outcome text NOT NULL,"
          + " PRIMARY KEY (global_id, branch_id, op))");
      s.execute("CREATE TABLE tcc_calls (id bigserial PRIMARY KEY, global_id text, branch_id text, op text,"
          + " outcome text)");
    }
  }

  /** The next calls of (global, branch, op) do {@code actions}, one each. */
  void script(String global, String branch, TccOperation op, String... actions) {
    script.computeIfAbsent(global + "/" + branch + "/" + op, k -> new ArrayDeque<>()).addAll(List.of(actions));
  }

  private String next(String global, String branch, TccOperation op) {
    Deque<String> d = script.get(global + "/" + branch + "/" + op);
    String a = d == null ? null : d.poll();
    return a == null ? "" : a;
  }

  /** Runs the barrier for one call in {@code c}'s transaction. */
  Result barrier(Connection c, String g, String b, TccOperation op, String action) throws Exception {
    if (action.equals("FAIL")) {
      return Result.FAILED;
    }
    switch (op) {
      case TRY -> {
        if (insert(c, g, b, "try", action.equals("REFUSE") ? "REFUSED" : "RAN")) {
          return action.equals("REFUSE") ? Result.REFUSED : Result.RAN;
        }
        return switch (outcome(c, g, b, "try")) {
          case "RAN" -> Result.DUPLICATE;
          case "PREVENTED" -> Result.HANGING_REFUSED;
          default -> Result.REFUSED;
        };
      }
      case CONFIRM -> {
        return insert(c, g, b, "confirm", "RAN") ? Result.RAN : Result.DUPLICATE;
      }
      default -> {
        if (!insert(c, g, b, "cancel", "RAN")) {
          return Result.DUPLICATE;
        }
        if (insert(c, g, b, "try", "PREVENTED")) {
          return Result.EMPTY_ROLLBACK; // cancel before try: nothing to release; a later Try is refused
        }
        return outcome(c, g, b, "try").equals("RAN") ? Result.RAN : Result.EMPTY_ROLLBACK;
      }
    }
  }

  /** Handles a saga command carrying a TCC call and publishes its reply in the same unit of work. */
  void handle(IncomingMessage m) {
    String g = m.header(TccHeaders.GLOBAL_ID);
    String b = m.header(TccHeaders.BRANCH_ID);
    TccOperation op = TccOperation.fromWireName(m.header(TccHeaders.OPERATION));
    String action = next(g, b, op);
    Result r = producer.inTransaction(tx -> {
      Result res = barrier(tx.connection(), g, b, op, action);
      OutgoingMessage.Builder reply = OutgoingMessage.builder(m.header(SagaHeaders.REPLY_TO)).key(g)
          .header(SagaHeaders.SAGA_ID, m.header(SagaHeaders.SAGA_ID)).header(SagaHeaders.STEP,
              m.header(SagaHeaders.STEP))
          .header(SagaHeaders.ATTEMPT, m.header(SagaHeaders.ATTEMPT))
          .header(SagaHeaders.DIRECTION, m.header(SagaHeaders.DIRECTION))
          .header(SagaHeaders.OUTCOME, switch (res) {
            case RAN, DUPLICATE, EMPTY_ROLLBACK -> "SUCCESS";
            case HANGING_REFUSED, REFUSED -> "BUSINESS_FAILURE";
            case FAILED -> "TECHNICAL_FAILURE";
          }).payload(("{\"" + b + "\":\"" + res + "\"}").getBytes(StandardCharsets.UTF_8));
      if (res == Result.HANGING_REFUSED) {
        reply.header(SagaHeaders.REASON, "HANGING_REFUSED");
      }
      if (res != Result.REFUSED && res != Result.FAILED) {
        reply.header(TccHeaders.OUTCOME, res.name());
      }
      tx.publish(reply.build());
      return res;
    });
    record(g, b, op, r.name());
  }

  /** Runs the Cancel of (global, branch) here, before any Try: as if a coordinator's Cancel had come first. */
  Result cancelFirst(String g, String b) throws Exception {
    Result r;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      r = barrier(c, g, b, TccOperation.CANCEL, "");
      c.commit();
    }
    record(g, b, TccOperation.CANCEL, r.name());
    return r;
  }

  /** The calls of {@code global} as {@code branch op outcome}, in order. */
  List<String> calls(String global) throws Exception {
    return rows(ds, "SELECT branch_id || ' ' || op || ' ' || outcome FROM tcc_calls WHERE global_id = '" + global
        + "' ORDER BY id");
  }

  /** The first column of {@code sql}'s rows on {@code ds}, as text. */
  static List<String> rows(DataSource ds, String sql) throws Exception {
    List<String> out = new java.util.ArrayList<>();
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /** Starts the HTTP side on a free port of the loopback; its base URL. */
  URI serve() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newFixedThreadPool(4));
    server.createContext("/", this::http);
    server.start();
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  private void http(HttpExchange ex) {
    try (ex) {
      String g = ex.getRequestHeaders().getFirst(TccHeaders.GLOBAL_ID);
      String b = ex.getRequestHeaders().getFirst(TccHeaders.BRANCH_ID);
      TccOperation op = TccOperation.fromWireName(ex.getRequestHeaders().getFirst(TccHeaders.OPERATION));
      ex.getRequestBody().readAllBytes();
      requests.add(ex.getRequestURI().getPath() + " " + op.wireName() + " " + g + " " + b + " "
          + ex.getRequestHeaders().getFirst(Envelope.TENANT) + " " + ex.getRequestHeaders().getFirst("Content-Type"));
      String action = next(g, b, op);
      if (action.startsWith("SLOW:")) {
        Thread.sleep(Long.parseLong(action.substring(5)));
        action = "";
      }
      if (action.equals("503") || action.equals("404")) {
        record(g, b, op, action);
        ex.sendResponseHeaders(Integer.parseInt(action), -1);
        return;
      }
      Result r;
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        r = barrier(c, g, b, op, action);
        c.commit();
      }
      record(g, b, op, r.name());
      int status = switch (r) {
        case RAN, DUPLICATE, EMPTY_ROLLBACK -> 200;
        case HANGING_REFUSED -> 409;
        case REFUSED -> 422;
        case FAILED -> 500;
      };
      if (r != Result.REFUSED && r != Result.FAILED) {
        ex.getResponseHeaders().add(TccHeaders.OUTCOME, r.name());
      }
      byte[] body = ("{\"" + b + "\":\"" + r + "\"}").getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(status, body.length);
      ex.getResponseBody().write(body);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void record(String g, String b, TccOperation op, String outcome) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "INSERT INTO tcc_calls (global_id, branch_id, op, outcome) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, g);
      ps.setString(2, b);
      ps.setString(3, op.wireName());
      ps.setString(4, outcome);
      ps.executeUpdate();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean insert(Connection c, String g, String b, String op, String outcome) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO tcc_test_barrier (global_id, branch_id, op, outcome)"
        + " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
      ps.setString(1, g);
      ps.setString(2, b);
      ps.setString(3, op);
      ps.setString(4, outcome);
      return ps.executeUpdate() == 1;
    }
  }

  private static String outcome(Connection c, String g, String b, String op) throws Exception {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT outcome FROM tcc_test_barrier WHERE global_id = ? AND branch_id = ? AND op = ?")) {
      ps.setString(1, g);
      ps.setString(2, b);
      ps.setString(3, op);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
      ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
  }

  /** The schema's migrations (producer, outbox, consumer, saga). */
  static final class Migrations {

    static void apply(DataSource ds) throws Exception {
      io.converge.core.Migrations.apply(ds, "producer");
      io.converge.core.Migrations.apply(ds, "outbox");
      io.converge.core.Migrations.apply(ds, "consumer");
      io.converge.core.Migrations.apply(ds, "saga");
    }
  }
}
