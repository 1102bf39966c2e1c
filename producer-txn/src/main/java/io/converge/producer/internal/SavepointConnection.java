package io.converge.producer.internal;

import io.converge.producer.ConnectionCallRefusedException;
import io.converge.core.ConvergeException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Savepoint;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The connection handed to a unit of work: the JDBC connection itself, except that a rollback to one
 * of its savepoints also discards the messages published after that savepoint (issue 13.1), the calls
 * that would end the unit's transaction behind its back ({@code commit()}, {@code rollback()},
 * {@code setAutoCommit(true)}) are refused, and {@code close()} does nothing (the unit closes the
 * connection when it ends). Every other call goes straight to the connection. Used by the unit's one thread.
 */
final class SavepointConnection implements InvocationHandler {

  /** The unit of work's side: how many messages are published, and dropping those after a count. */
  interface Unit {

    int published();

    void rollbackTo(int kept);
  }

  private final Connection target;
  private final Unit unit;
  private final Map<Savepoint, Integer> marks = new IdentityHashMap<>();

  private SavepointConnection(Connection target, Unit unit) {
    this.target = target;
    this.unit = unit;
  }

  static Connection wrap(Connection target, Unit unit) {
    return (Connection) Proxy.newProxyInstance(SavepointConnection.class.getClassLoader(),
        new Class<?>[]{Connection.class}, new SavepointConnection(target, unit));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    if (name.equals("equals") && args != null && args.length == 1) {
      return proxy == args[0];
    }
    if (name.equals("hashCode") && args == null) {
      return System.identityHashCode(proxy);
    }
    if (args == null && (name.equals("commit") || name.equals("rollback"))) {
      // a mid-unit commit or rollback would split the unit: its messages end with the unit's outcome
      throw new ConnectionCallRefusedException(name + "()");
    }
    if (name.equals("setAutoCommit") && Boolean.TRUE.equals(args[0])) {
      throw new ConnectionCallRefusedException("setAutoCommit(true)"); // it commits the transaction
    }
    if (name.equals("close") && args == null) {
      return null; // the unit closes its connection when it ends
    }
    if (name.equals("rollback") && args != null && args.length == 1) {
      Integer kept = marks.get((Savepoint) args[0]);
      if (kept == null) {
        // taken around this connection (unwrapped, or by SQL): which messages it covers is unknown
        throw new ConvergeException("Rollback to a savepoint that was not set through TxnContext.connection();"
            + " set savepoints with connection().setSavepoint() so that their messages roll back with them");
      }
      call(method, args);
      marks.values().removeIf(count -> count > kept); // savepoints taken after it are gone too
      unit.rollbackTo(kept);
      return null;
    }
    Object result = call(method, args);
    if (name.equals("setSavepoint")) {
      marks.put((Savepoint) result, unit.published());
    } else if (name.equals("releaseSavepoint")) {
      marks.remove((Savepoint) args[0]);
    }
    return result;
  }

  private Object call(Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
