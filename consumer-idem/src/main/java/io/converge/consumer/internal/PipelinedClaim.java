package io.converge.consumer.internal;

import io.converge.consumer.ClaimRefusedException;
import io.converge.consumer.Outcome;
import io.converge.core.internal.PipelinedCommit;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Set;

/**
 * The claim of a message sent with the handler's first statement, in one round trip
 * ({@code IdempotentHandler.Builder#claimWithFirstStatement}). The handler gets a connection that holds
 * the claim back: its first {@code prepareStatement(sql)} executed goes to the server as
 * {@link DedupStatements#claimOrRefuse}{@code ; sql}, one pipeline in which the claim runs first and,
 * for a duplicate or a held key, fails so that the handler's statement never runs (the server skips
 * the rest of the pipeline and the transaction is aborted). Any other use of the connection first
 * sends the claim alone, as does a handler that returns or throws before using it. The claim's
 * guarantee is the same as that of the separate claim: it is the first statement of the transaction,
 * a concurrent copy waits on its primary key and sees the winner. What changes is that the handler's
 * code before its first statement runs for a duplicate too. After a refusal the connection and its
 * statements refuse every call ({@link ClaimRefusedException}) but closing: a handler that catches the
 * error, rolls back and runs again on its own must not commit an effect for a duplicate. PostgreSQL's
 * JDBC driver only; used by one thread.
 */
final class PipelinedClaim {

  /** The claim was refused: the transaction is aborted and rolls back; the message is this outcome. */
  static final class Refused extends RuntimeException {

    private static final long serialVersionUID = 1L;
    private final transient Outcome outcome;

    Refused(Outcome outcome) {
      super("claim refused: " + outcome, null, false, false);
      this.outcome = outcome;
    }

    Outcome outcome() {
      return outcome;
    }
  }

  // connection methods that neither touch the transaction nor hand out the raw connection
  private static final Set<String> LOCAL = Set.of("getAutoCommit", "isClosed", "toString", "hashCode", "equals",
      "isReadOnly", "getWarnings", "clearWarnings");
  // the calls a refused connection or statement still answers
  private static final Set<String> AFTER_REFUSAL = Set.of("close", "isClosed", "toString", "hashCode", "equals");

  private final Connection connection;
  private final String tenant;
  private final String group;
  private final String messageId;
  private final String topic;
  private final String key;
  private final Instant now;
  private final Connection proxy;
  private boolean pending = true;
  private Outcome refused;

  private PipelinedClaim(Connection connection, String tenant, String group, String messageId, String topic,
      String key, Instant now) {
    this.connection = connection;
    this.tenant = tenant;
    this.group = group;
    this.messageId = messageId;
    this.topic = topic;
    this.key = key;
    this.now = now;
    this.proxy = (Connection) Proxy.newProxyInstance(PipelinedClaim.class.getClassLoader(),
        new Class<?>[]{Connection.class}, new ConnectionHandler());
  }

  /** A claim held back on {@code connection}, or null when its driver cannot pipeline (not pgjdbc). */
  static PipelinedClaim open(Connection connection, String tenant, String group, String messageId, String topic,
      String key, Instant now) throws SQLException {
    if (!PipelinedCommit.supported(connection)) {
      return null;
    }
    return new PipelinedClaim(connection, tenant, group, messageId, topic, key, now);
  }

  /** The connection to give the handler. */
  Connection connection() {
    return proxy;
  }

  /**
   * After the handler returned: sends the claim if the handler never used the connection.
   *
   * @throws Refused when the claim was refused (whatever the handler did with the error)
   */
  void afterHandler() throws SQLException {
    try {
      flush();
    } catch (SQLException e) {
      if (refused == null) {
        throw e;
      }
    }
    if (refused != null) {
      throw new Refused(refused);
    }
  }

  /**
   * After the handler threw {@code failure}: a refused claim is the outcome, whatever the handler made
   * of its error; a claim not yet sent is sent now, so that a duplicate stays a duplicate.
   *
   * @throws Refused when the claim was refused
   */
  void afterFailure(Throwable failure) {
    try {
      flush();
    } catch (SQLException e) {
      if (refused == null) {
        failure.addSuppressed(e);
        return;
      }
    }
    if (refused != null) {
      throw new Refused(refused);
    }
  }

  /** True while the claim has not gone out. */
  boolean pending() {
    return pending;
  }

  /**
   * The claim followed by {@code sql} in one statement, the claim's parameters bound (the handler's come after
   * {@link #claimParameters()}); from now on the claim is no longer pending, whatever happens.
   */
  PreparedStatement prepareWithClaim(String sql) throws SQLException {
    pending = false;
    PreparedStatement fused = connection.prepareStatement(DedupStatements.claimOrRefuse(key).sql() + ";\n"
        + sql.strip());
    DedupStatements.bindClaim(fused, tenant, group, messageId, topic, key, now);
    return fused;
  }

  /** How many parameters the claim sent with the handler's first statement has: the handler's come after them. */
  int claimParameters() {
    return DedupStatements.claimOrRefuse(key).parameterCount();
  }

  /** {@code sql} as a plain statement, after the claim went out alone. */
  PreparedStatement preparePlain(String sql) throws SQLException {
    flush();
    return connection.prepareStatement(sql);
  }

  /** Sends the claim alone when it is still pending. */
  private void flush() throws SQLException {
    if (!pending) {
      return;
    }
    pending = false;
    try (PreparedStatement ps = connection.prepareStatement(DedupStatements.claimOrRefuse(key).sql())) {
      DedupStatements.bindClaim(ps, tenant, group, messageId, topic, key, now);
      ps.executeQuery().close();
    } catch (SQLException e) {
      throw refusal(e);
    }
  }

  /** Records a refusal that {@code e} reports and returns the exception for the handler to see. */
  SQLException refusal(SQLException e) {
    String text = String.valueOf(e.getMessage());
    if (text.contains(DedupStatements.REFUSED_DUPLICATE)) {
      refused = Outcome.DUPLICATE;
    } else if (text.contains(DedupStatements.REFUSED_HELD)) {
      refused = Outcome.HELD;
    } else {
      return e;
    }
    return refusedError(e);
  }

  private ClaimRefusedException refusedError(SQLException cause) {
    return new ClaimRefusedException("Message " + messageId + " of group " + group + " is "
        + (refused == Outcome.DUPLICATE ? "a duplicate" : "held behind a parked message of its key")
        + ": the handler's transaction is rolled back and its connection refuses every further call", messageId,
        group, refused, cause);
  }

  /** After a refusal, every call but closing fails: nothing the handler does next may take effect. */
  void refuseAfterRefusal(String name) throws ClaimRefusedException {
    if (refused != null && !AFTER_REFUSAL.contains(name)) {
      throw refusedError(null);
    }
  }

  /** Calls {@code method} on {@code target}, throwing what it throws. */
  static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** The handler's connection: holds the claim back until its first statement. */
  private final class ConnectionHandler implements InvocationHandler {

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      refuseAfterRefusal(name);
      if (name.equals("unwrap") || name.equals("isWrapperFor")) {
        flush(); // the raw connection escapes: the claim goes first
        return PipelinedClaim.invoke(connection, method, args);
      }
      if (pending && name.equals("prepareStatement") && args != null && args.length == 1
          && args[0] instanceof String sql) {
        return Proxy.newProxyInstance(PipelinedClaim.class.getClassLoader(),
            new Class<?>[]{PreparedStatement.class}, new PipelinedStatement(PipelinedClaim.this, sql));
      }
      if (pending && !LOCAL.contains(name)) {
        flush();
      }
      return PipelinedClaim.invoke(connection, method, args);
    }
  }
}
