package io.converge.consumer.http.internal;

import io.converge.consumer.http.IdempotencyException;
import io.converge.consumer.http.IdempotencyProblem;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a request's body once and fingerprints it: SHA-256 over the method, the canonical path, the
 * query string (parameters sorted) and the canonical body, each field length-prefixed. JSON bodies ({@code application/json}, {@code application/*+json}) are
 * canonicalised; form bodies are their parameters sorted by name; anything else is hashed as sent.
 */
final class RequestReader {

  /** The request to hand on (re-readable) and its fingerprint. */
  record Read(HttpServletRequest request, String fingerprint) {
  }

  private RequestReader() {
  }

  static Read read(HttpServletRequest request, String path, JsonCanonicalizer json, int maxBodyBytes)
      throws IOException {
    String contentType = request.getContentType() == null ? "" : request.getContentType().toLowerCase(Locale.ROOT);
    if (contentType.startsWith("application/x-www-form-urlencoded")) {
      // the container parses the form from the stream: read it through the parameters, leave the stream alone
      StringBuilder form = new StringBuilder();
      for (Map.Entry<String, String[]> p : new TreeMap<>(request.getParameterMap()).entrySet()) {
        for (String v : p.getValue()) {
          field(form, p.getKey());
          field(form, v);
        }
      }
      // a form's parameters include the query's
      return new Read(new BufferedRequest(request, null), fingerprint(request.getMethod(), path, "", "form",
          form.toString().getBytes(StandardCharsets.UTF_8)));
    }
    byte[] body = body(request, maxBodyBytes);
    String media = contentType.split(";", 2)[0].trim();
    boolean isJson = media.equals("application/json") || (media.startsWith("application/") && media.endsWith("+json"));
    byte[] canonical = isJson && body.length > 0 ? json.canonicalize(body) : body;
    return new Read(new BufferedRequest(request, body), fingerprint(request.getMethod(), path,
        canonicalQuery(request.getQueryString()), isJson ? "json" : "raw", canonical));
  }

  /**
   * The query's parameters decoded and sorted by name (values of one name in their order), each name and
   * value length-prefixed, so {@code ?b=2&a=1} and {@code ?a=1&b=%32} are one request and no decoded
   * {@code %00} or {@code %0A} can pass for a separator; empty when there is no query.
   */
  static String canonicalQuery(String query) {
    if (query == null || query.isEmpty()) {
      return "";
    }
    java.util.List<String[]> params = new java.util.ArrayList<>();
    for (String part : query.split("&")) {
      if (part.isEmpty()) {
        continue;
      }
      int eq = part.indexOf('=');
      String name = eq < 0 ? part : part.substring(0, eq);
      String value = eq < 0 ? "" : part.substring(eq + 1);
      params.add(new String[]{decode(name), decode(value)});
    }
    params.sort(java.util.Comparator.comparing(p -> p[0])); // stable: a name's values keep their order
    StringBuilder out = new StringBuilder();
    for (String[] p : params) {
      field(out, p[0]);
      field(out, p[1]);
    }
    return out.toString();
  }

  /** {@code <length>:<text>}: a netstring, which no content can forge. */
  private static void field(StringBuilder out, String text) {
    out.append(text.length()).append(':').append(text);
  }

  private static String decode(String s) {
    try {
      return java.net.URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s; // a malformed escape is kept as sent: it still tells two requests apart
    }
  }

  private static byte[] body(HttpServletRequest request, int max) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared > max) {
      throw tooLarge(max);
    }
    try (InputStream in = request.getInputStream()) {
      byte[] body = in.readNBytes(max + 1);
      if (body.length > max) {
        throw tooLarge(max);
      }
      return body;
    }
  }

  private static IdempotencyException tooLarge(int max) {
    return new IdempotencyException(IdempotencyProblem.BODY_TOO_LARGE,
        "The request body is larger than " + max + " bytes, the most an Idempotency-Key endpoint accepts");
  }

  /**
   * SHA-256 over the method, the canonical path, the canonical query, the body's kind and the canonical
   * body, each preceded by its length: two different requests never hash the same input, whatever bytes
   * their decoded paths, parameters or bodies hold.
   */
  static String fingerprint(String method, String path, String query, String kind, byte[] canonical) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (String field : new String[]{method, path, query, kind}) {
        update(sha, field.getBytes(StandardCharsets.UTF_8));
      }
      update(sha, canonical);
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  private static void update(MessageDigest sha, byte[] field) {
    sha.update(java.nio.ByteBuffer.allocate(Integer.BYTES).putInt(field.length).array());
    sha.update(field);
  }
}
