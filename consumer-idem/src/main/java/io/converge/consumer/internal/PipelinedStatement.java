package io.converge.consumer.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A statement of the handler prepared while the {@link PipelinedClaim} was pending: its first execution carries the
 * claim when the claim is still pending then; otherwise, and for every later use, a plain statement
 * of the same SQL with the same parameters runs.
 */
final class PipelinedStatement implements InvocationHandler {

  // statement methods that read the results of the last execution
  private static final Set<String> RESULTS = Set.of("getResultSet", "getUpdateCount", "getLargeUpdateCount",
      "getMoreResults", "getWarnings", "clearWarnings", "getResultSetType", "getResultSetConcurrency");

  private final PipelinedClaim claim;
  private final String sql;
  private final List<Object[]> parameters = new ArrayList<>(); // method, args
  private final List<Object[]> options = new ArrayList<>();
  private PreparedStatement fused;
  private PreparedStatement plain;
  private PreparedStatement last;
  private boolean closed;

  PipelinedStatement(PipelinedClaim claim, String sql) {
    this.claim = claim;
    this.sql = sql;
  }

  @Override
  public Object invoke(Object self, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    int arity = args == null ? 0 : args.length;
    claim.refuseAfterRefusal(name);
    switch (name) {
      case "toString" :
        return "PipelinedClaim statement [" + sql + "]";
      case "hashCode" :
        return System.identityHashCode(self);
      case "equals" :
        return self == args[0];
      case "getConnection" :
        return claim.connection();
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
    if (isExecution(name, arity) && claim.pending() && fused == null) {
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
    fused = claim.prepareWithClaim(sql); // whatever happens now, the claim went out first
    for (Object[] o : options) {
      PipelinedClaim.invoke(fused, (Method) o[0], (Object[]) o[1]);
    }
    for (Object[] p : parameters) {
      Object[] shifted = ((Object[]) p[1]).clone();
      shifted[0] = (Integer) shifted[0] + claim.claimParameters();
      PipelinedClaim.invoke(fused, (Method) p[0], shifted);
    }
    try {
      fused.execute();
    } catch (SQLException e) {
      throw claim.refusal(e);
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
      plain = claim.preparePlain(sql);
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
