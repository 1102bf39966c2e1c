package io.converge.consumer.internal;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Headers as {@code name=value} lines, both percent-encoded: readable by ops, lossless (DLQ headers, stored HTTP responses). */
public final class HeaderCodec {

  private HeaderCodec() {
  }

  public static String encode(Map<String, String> headers) {
    StringBuilder b = new StringBuilder();
    headers.forEach((k, v) -> b.append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
        .append(URLEncoder.encode(v, StandardCharsets.UTF_8)).append('\n'));
    return b.toString();
  }

  public static Map<String, String> decode(String text) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        headers.put(URLDecoder.decode(line.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(line.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return headers;
  }
}
