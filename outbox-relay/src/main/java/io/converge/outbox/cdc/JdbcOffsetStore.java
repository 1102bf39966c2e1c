package io.converge.outbox.cdc;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;

/**
 * Debezium's offsets in table {@code converge_cdc_offset} of the outbox's own database: loaded at start,
 * written (upsert of every key, in one transaction) at each offset flush. Debezium instantiates it by
 * class name and configures it from the engine's properties ({@value #URL}, {@value #USER},
 * {@value #PASSWORD}, {@value #SCHEMA}, {@value #NAME}).
 */
public final class JdbcOffsetStore extends MemoryOffsetBackingStore {

  static final String URL = "converge.offset.jdbc.url";
  static final String USER = "converge.offset.jdbc.user";
  static final String PASSWORD = "converge.offset.jdbc.password";
  static final String SCHEMA = "converge.offset.jdbc.schema";
  static final String NAME = "converge.offset.relay.name";

  private static final String LOAD = "SELECT offset_key, offset_val FROM converge_cdc_offset WHERE relay_name = ?";
  private static final String UPSERT = """
      INSERT INTO converge_cdc_offset (relay_name, offset_key, offset_val, updated_at) VALUES (?, ?, ?, now())
      ON CONFLICT (relay_name, offset_key) DO UPDATE SET offset_val = EXCLUDED.offset_val, updated_at = now()""";

  private String url;
  private String user;
  private String password;
  private String schema;
  private String name;

  /** Instantiated by Debezium. */
  public JdbcOffsetStore() {
  }

  @Override
  public void configure(WorkerConfig config) {
    super.configure(config);
    Map<String, String> o = config.originalsStrings();
    url = required(o, URL);
    user = o.get(USER);
    password = o.get(PASSWORD);
    schema = o.get(SCHEMA);
    name = required(o, NAME);
  }

  private static String required(Map<String, String> o, String key) {
    String v = o.get(key);
    if (v == null || v.isBlank()) {
      throw new ConnectException("JdbcOffsetStore needs " + key + ", but it was " + v);
    }
    return v;
  }

  @Override
  public synchronized void start() {
    super.start();
    Map<ByteBuffer, ByteBuffer> loaded = new HashMap<>();
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(LOAD)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          byte[] v = rs.getBytes(2);
          loaded.put(ByteBuffer.wrap(rs.getBytes(1)), v == null ? null : ByteBuffer.wrap(v));
        }
      }
    } catch (SQLException e) {
      throw new ConnectException("Cannot load the CDC offsets of relay " + name + ": " + e.getMessage(), e);
    }
    data.putAll(loaded);
  }

  @Override
  protected void save() {
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(UPSERT)) {
      c.setAutoCommit(false);
      for (Map.Entry<ByteBuffer, ByteBuffer> e : data.entrySet()) {
        ps.setString(1, name);
        ps.setBytes(2, bytes(e.getKey()));
        ps.setBytes(3, e.getValue() == null ? null : bytes(e.getValue()));
        ps.addBatch();
      }
      ps.executeBatch();
      c.commit();
    } catch (SQLException e) {
      throw new ConnectException("Cannot save the CDC offsets of relay " + name + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Set<Map<String, Object>> connectorPartitions(String connectorName) {
    return Set.of();
  }

  private Connection connect() throws SQLException {
    Connection c = DriverManager.getConnection(url, user, password);
    if (schema != null && !schema.isBlank()) {
      c.setSchema(schema);
    }
    return c;
  }

  private static byte[] bytes(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    byte[] out = new byte[d.remaining()];
    d.get(out);
    return out;
  }
}
