package io.converge.saga;

import io.converge.consumer.IncomingMessage;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The committed messages of an outbox-backed test, read from {@code converge_outbox} in commit order and handed
 * to the test, which delivers, holds, drops or repeats them at will (the order of events a broker may produce,
 * made deterministic). Not thread-safe.
 */
final class Mailbox {

  private final DataSource ds;
  private long cursor;

  Mailbox(DataSource ds) {
    this.ds = ds;
  }

  /** A mailbox that hands out the messages committed from now on. */
  static Mailbox fromNow(DataSource ds) throws Exception {
    Mailbox m = new Mailbox(ds);
    m.next();
    return m;
  }

  /** The messages committed since the last call, oldest first. */
  List<IncomingMessage> next() throws Exception {
    List<IncomingMessage> out = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(
            "SELECT seq, topic, header_names, header_values, payload FROM converge_outbox WHERE seq > ? ORDER BY seq")) {
      ps.setLong(1, cursor);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          cursor = rs.getLong(1);
          IncomingMessage.Builder b = IncomingMessage.builder().topic(rs.getString(2)).payload(rs.getBytes(5));
          String[] names = strings(rs.getArray(3));
          String[] values = strings(rs.getArray(4));
          for (int i = 0; i < names.length; i++) {
            b.header(names[i], values[i]);
          }
          out.add(b.build());
        }
      }
    }
    return out;
  }

  private static String[] strings(Array a) throws Exception {
    return (String[]) a.getArray();
  }
}
