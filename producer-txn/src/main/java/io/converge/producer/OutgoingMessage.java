package io.converge.producer;

import io.converge.core.Envelope;
import io.converge.core.InvalidMessageException;
import io.converge.core.MessageIds;
import io.converge.core.MessageSignature;
import io.converge.core.SchemaVersion;
import io.converge.core.SigningKeys;
import io.converge.core.internal.Require;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A message to publish: topic, key, tag, headers and an opaque payload, with a stable id. Immutable
 * and thread-safe; built with {@link #builder(String)}.
 *
 * <p>The id is generated (UUID version 7, time-ordered) when not given, and travels in the
 * {@link Envelope#MESSAGE_ID} header, so receivers can deduplicate. The key selects the queue or
 * partition, so messages of one key keep their order. A message may name its payload's {@linkplain Builder#schema
 * schema} ({@link Envelope#SCHEMA}) and be {@linkplain #signedWith signed} ({@link Envelope#SIGNATURE}).
 */
public final class OutgoingMessage {

  /** Topic names every backend accepts: letters, digits, '_', '-', '%', '|', at most 127. */
  public static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9_%|-]{1,127}");
  private static final Pattern HEADER = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");
  private static final int MAX_KEY = 128;

  private final String id;
  private final String topic;
  private final String key;
  private final String tag;
  private final String tenant;
  private final Map<String, String> headers;
  private final byte[] payload;
  private final SchemaVersion schema;
  private final SigningKeys signer;

  private OutgoingMessage(OutgoingMessage m, SigningKeys signer) {
    this.id = m.id;
    this.topic = m.topic;
    this.key = m.key;
    this.tag = m.tag;
    this.tenant = m.tenant;
    this.headers = m.headers;
    this.payload = m.payload;
    this.schema = m.schema;
    this.signer = signer;
  }

  private OutgoingMessage(OutgoingMessage m, Map<String, String> extra) {
    this.id = m.id;
    this.topic = m.topic;
    this.key = m.key;
    this.tag = m.tag;
    this.tenant = m.tenant;
    Map<String, String> all = new LinkedHashMap<>(m.headers);
    all.putAll(extra);
    this.headers = Collections.unmodifiableMap(all);
    this.payload = m.payload;
    this.schema = m.schema;
    this.signer = m.signer;
  }

  private OutgoingMessage(Builder b) {
    this.id = b.id != null ? b.id : MessageIds.shared().next();
    this.topic = b.topic;
    this.key = b.key;
    this.tag = b.tag;
    this.tenant = b.tenant;
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
    this.payload = b.payload;
    this.schema = b.schema;
    this.signer = null;
  }

  /** A builder for a message on {@code topic}. */
  public static Builder builder(String topic) {
    return new Builder(topic);
  }

  /** The message id (never null). */
  public String id() {
    return id;
  }

  /** The topic. */
  public String topic() {
    return topic;
  }

  /** The key (aggregate id), or null. */
  public String key() {
    return key;
  }

  /** The tag (RocketMQ sub-type), or null. */
  public String tag() {
    return tag;
  }

  /** The tenant ({@link Envelope#DEFAULT_TENANT} when none was set). */
  public String tenant() {
    return tenant;
  }

  /** The application headers (without the envelope's), unmodifiable. */
  public Map<String, String> headers() {
    return headers;
  }

  /** The payload; the caller must not modify it. */
  public byte[] payload() {
    return payload;
  }

  /** The payload's schema ({@link Envelope#SCHEMA}), or null when the message names none. */
  public SchemaVersion schema() {
    return schema;
  }

  /**
   * This message, its envelope signed with {@code keys.current()} ({@link Envelope#SIGNATURE}, over the envelope as
   * {@link #envelope} stamps it: {@link MessageSignature}). {@code TxnProducerBuilder.sign} does this for every
   * message; call it to sign some only.
   *
   * @throws InvalidMessageException when the payload is empty: consumers refuse a signature on a message without a
   *     body
   */
  public OutgoingMessage signedWith(SigningKeys keys) {
    Objects.requireNonNull(keys, "keys");
    if (payload.length == 0) {
      throw new InvalidMessageException(Require.failure("message.payload", "not be empty on a signed message",
          "0 bytes"), id, null);
    }
    return new OutgoingMessage(this, keys);
  }

  /**
   * This message with {@code extra} headers added (the producer adds the W3C trace context with it), everything else
   * kept: id, key, tenant, payload, schema and signing (a signature is computed when the envelope is stamped, so it
   * covers what is sent).
   *
   * @throws InvalidMessageException when a name is not a valid header name, or is a reserved one
   *     ({@link Envelope#SCHEMA}, {@link Envelope#SIGNATURE})
   */
  public OutgoingMessage withHeaders(Map<String, String> extra) {
    Builder check = builder(topic);
    extra.forEach(check::header);
    check.build(); // the builder's header rules, once
    return new OutgoingMessage(this, Map.copyOf(extra));
  }

  /**
   * The envelope and application headers as sent: the envelope's names win over an application
   * header of the same name.
   */
  public Map<String, String> envelope(String source, long createdAtMillis) {
    Map<String, String> all = new LinkedHashMap<>(headers);
    all.put(Envelope.MESSAGE_ID, id);
    all.put(Envelope.TENANT, tenant);
    all.put(Envelope.SOURCE, source);
    all.put(Envelope.CREATED_AT, Long.toString(createdAtMillis));
    if (key != null) {
      all.put(Envelope.KEY, key);
    }
    if (schema != null) {
      all.put(Envelope.SCHEMA, schema.toString());
    }
    if (signer != null) {
      all.put(Envelope.SIGNATURE, MessageSignature.sign(signer, topic, all, payload)); // last: over all the rest
    }
    return all;
  }

  @Override
  public String toString() {
    return "OutgoingMessage[id=" + id + ", topic=" + topic + ", key=" + key + ", bytes=" + payload.length + "]";
  }

  /** Builds an {@link OutgoingMessage}; not thread-safe. */
  public static final class Builder {

    private final String topic;
    private String id;
    private String key;
    private String tag;
    private String tenant = Envelope.DEFAULT_TENANT;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private byte[] payload = new byte[0];
    private boolean schemaSet;
    private String schemaType;
    private int major;
    private int minor;
    private SchemaVersion schema;

    private Builder(String topic) {
      this.topic = topic;
    }

    /** The id; default a new time-ordered id. Must be a canonical UUID. */
    public Builder id(String id) {
      this.id = id;
      return this;
    }

    /** The key (aggregate id): at most 128 characters, no control characters. */
    public Builder key(String key) {
      this.key = key;
      return this;
    }

    /** A tag (RocketMQ sub-type filter). */
    public Builder tag(String tag) {
      this.tag = tag;
      return this;
    }

    /** The tenant; default {@value Envelope#DEFAULT_TENANT}. */
    public Builder tenant(String tenant) {
      this.tenant = tenant;
      return this;
    }

    /** An application header: name of lower-case letters, digits, '.', '_', '-'. */
    public Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    /**
     * The payload's schema, sent as {@link Envelope#SCHEMA} {@code type/major.minor} (e.g. {@code order-created/2.1}):
     * consumers that declare the majors they accept park a message of another major. Default none.
     *
     * @param type 1..128 letters, digits, {@code . _ -} ({@link SchemaVersion#TYPE})
     * @param major bumped for a change an older reader cannot read
     * @param minor bumped for an addition an older reader of the same major may ignore
     */
    public Builder schema(String type, int major, int minor) {
      this.schemaSet = true;
      this.schemaType = type;
      this.major = major;
      this.minor = minor;
      return this;
    }

    /** The payload bytes (opaque; JSON by convention). */
    public Builder payload(byte[] payload) {
      this.payload = payload;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws InvalidMessageException naming the field and its value
     */
    public OutgoingMessage build() {
      check(topic != null && TOPIC.matcher(topic).matches(), "message.topic", "match " + TOPIC.pattern(), topic);
      check(id == null || MessageIds.isValid(id), "message.id", "be a canonical UUID", id);
      check(key == null || (!key.isEmpty() && key.length() <= MAX_KEY && printable(key)), "message.key",
          "be 1-" + MAX_KEY + " printable characters", key);
      check(tenant != null && !tenant.isEmpty() && tenant.length() <= 64 && printable(tenant), "message.tenant",
          "be 1-64 printable characters", tenant);
      for (Map.Entry<String, String> h : headers.entrySet()) {
        check(HEADER.matcher(h.getKey()).matches() && h.getValue() != null && printable(h.getValue()),
            "message.header '" + h.getKey() + "'", "match " + HEADER.pattern() + " with a printable value",
            h.getValue());
      }
      for (String reserved : new String[]{Envelope.SCHEMA, Envelope.SIGNATURE}) {
        check(!headers.containsKey(reserved), "message.header '" + reserved + "'", "not be set as a header (use "
            + (reserved.equals(Envelope.SCHEMA) ? "schema(type, major, minor)" : "signing") + ")",
            headers.get(reserved));
      }
      if (schemaSet) {
        try {
          schema = new SchemaVersion(schemaType, major, minor);
        } catch (InvalidMessageException e) {
          throw new InvalidMessageException("message." + e.getMessage(), id, null);
        }
      }
      Objects.requireNonNull(payload, "payload");
      return new OutgoingMessage(this);
    }

    private void check(boolean ok, String property, String rule, String value) {
      if (!ok) {
        throw new InvalidMessageException(Require.failure(property, rule, "'" + value + "'"), id, null);
      }
    }

    private static boolean printable(String s) {
      return s.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
    }
  }
}
