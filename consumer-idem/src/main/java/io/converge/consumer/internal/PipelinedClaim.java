package io.converge.consumer.internal;

import io.converge.consumer.ClaimRefusedException;
import io.converge.consumer.Outcome;
import io.converge.producer.spi.PipelinedCommit;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The claim of a message sent with the handler's first statement, in one round trip
 * ({@code IdempotentHandler.Builder#claimWithFirstStatement}). The handler gets a connection that holds
 * the claim back: its first {@code prepareStatement(sql)} executed goes to the server as
 * {@link ConsumerStore#CLAIM_OR_REFUSE}{@code ; sql}, one pipeline in which the claim runs first and,
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
  // statement methods that read the results of the last execution
  private static final Set<String> RESULTS = Set.of("getResultSet", "getUpdateCount", "getLargeUpdateCount",
      "getMoreResults", "getWarnings", "clearWarnings", "getResultSetType", "getResultSetConcurrency");

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

  /** Sends the claim alone when it is still pending. */
  private void flush() throws SQLException {
    if (!pending) {
      return;
    }
    pending = false;
    try (PreparedStatement ps = connection.prepareStatement(ConsumerStore.CLAIM_OR_REFUSE)) {
      ConsumerStore.bindClaim(ps, tenant, group, messageId, topic, key, now);
      ps.executeQuery().close();
    } catch (SQLException e) {
      throw refusal(e);
    }
  }

  /** Records a refusal that {@code e} reports and returns the exception for the handler to see. */
  private SQLException refusal(SQLException e) {
    String text = String.valueOf(e.getMessage());
    if (text.contains(ConsumerStore.REFUSED_DUPLICATE)) {
      refused = Outcome.DUPLICATE;
    } else if (text.contains(ConsumerStore.REFUSED_HELD)) {
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
  private void refuseAfterRefusal(String name) throws ClaimRefusedException {
    if (refused != null && !AFTER_REFUSAL.contains(name)) {
      throw refusedError(null);
    }
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
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
            new Class<?>[]{PreparedStatement.class}, new StatementHandler(sql));
      }
      if (pending && !LOCAL.contains(name)) {
        flush();
      }
      return PipelinedClaim.invoke(connection, method, args);
    }
  }

  /**
   * A statement of the handler prepared while the claim was pending: its first execution carries the
   * claim when the claim is still pending then; otherwise, and for every later use, a plain statement
   * of the same SQL with the same parameters runs.
   */
  private final class StatementHandler implements InvocationHandler {

    private final String sql;
    private final List<Object[]> parameters = new ArrayList<>(); // method, args
    private final List<Object[]> options = new ArrayList<>();
    private PreparedStatement fused;
    private PreparedStatement plain;
    private PreparedStatement last;
    private boolean closed;

    StatementHandler(String sql) {
      this.sql = sql;
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      int arity = args == null ? 0 : args.length;
      refuseAfterRefusal(name);
      switch (name) {
        case "toString" :
          return "PipelinedClaim statement [" + sql + "]";
        case "hashCode" :
          return System.identityHashCode(self);
        case "equals" :
          return self == args[0];
        case "getConnection" :
          return proxy;
        case "isClosed" :
          return closed;
        case "close" :
          closed = true;
          closeAll();
          return null;
        default :
          break;
      }
      if (plain != null && !RESULTS.contains(name)) {
        if (isExecution(name, arity)) {
          last = plain;
        }
        return PipelinedClaim.invoke(plain, method, args);
      }
      if (name.startsWith("set") && arity >= 2 && method.getParameterTypes()[0] == int.class) {
        parameters.add(new Object[]{method, args});
        return null;
      }
      if (name.startsWith("set") && arity == 1) {
        options.add(new Object[]{method, args});
        return null;
      }
      if (name.equals("clearParameters")) {
        parameters.clear();
        return null;
      }
      if (last != null && RESULTS.contains(name)) {
        return PipelinedClaim.invoke(last, method, args);
      }
      if (isExecution(name, arity) && pending && fused == null) {
        return executeFused(name);
      }
      // anything else (a batch, metadata, a second execution, the claim already sent): a plain statement
      plain = plain();
      if (isExecution(name, arity)) {
        last = plain;
      }
      return PipelinedClaim.invoke(plain, method, args);
    }

    private boolean isExecution(String name, int arity) {
      return arity == 0 && (name.equals("execute") || name.equals("executeUpdate") || name.equals("executeQuery")
          || name.equals("executeLargeUpdate"));
    }

    private Object executeFused(String name) throws Throwable {
      pending = false; // whatever happens now, the claim went out first
      fused = connection.prepareStatement(ConsumerStore.CLAIM_OR_REFUSE + ";\n" + sql.strip());
      for (Object[] o : options) {
        PipelinedClaim.invoke(fused, (Method) o[0], (Object[]) o[1]);
      }
      ConsumerStore.bindClaim(fused, tenant, group, messageId, topic, key, now);
      for (Object[] p : parameters) {
        Object[] shifted = ((Object[]) p[1]).clone();
        shifted[0] = (Integer) shifted[0] + ConsumerStore.CLAIM_PARAMETERS;
        PipelinedClaim.invoke(fused, (Method) p[0], shifted);
      }
      try {
        fused.execute();
      } catch (SQLException e) {
        throw refusal(e);
      }
      last = fused;
      boolean resultSet = fused.getMoreResults(); // past the claim's row, to the handler's result
      switch (name) {
        case "executeQuery" :
          ResultSet rs = fused.getResultSet();
          if (rs == null) {
            throw new SQLException("No results were returned by the query.", "02000");
          }
          return rs;
        case "executeUpdate" :
          return fused.getUpdateCount();
        case "executeLargeUpdate" :
          return fused.getLargeUpdateCount();
        default :
          return resultSet;
      }
    }

    private PreparedStatement plain() throws Throwable {
      if (plain == null) {
        flush();
        plain = connection.prepareStatement(sql);
        for (Object[] o : options) {
          PipelinedClaim.invoke(plain, (Method) o[0], (Object[]) o[1]);
        }
        for (Object[] p : parameters) {
          PipelinedClaim.invoke(plain, (Method) p[0], (Object[]) p[1]);
        }
      }
      return plain;
    }

    private void closeAll() throws SQLException {
      SQLException failure = null;
      for (PreparedStatement ps : new PreparedStatement[]{fused, plain}) {
        if (ps != null) {
          try {
            ps.close();
          } catch (SQLException e) {
            failure = e;
          }
        }
      }
      if (failure != null) {
        throw failure;
      }
    }
  }
}
