package io.converge.console.web;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Decodes {@code a=1&b=2} (a query string or a urlencoded form) into the first value of each name. */
final class FormData {

  /** The most bytes of a posted form the console reads. */
  static final int MAX_BYTES = 64 * 1024;

  private FormData() {
  }

  static void decode(String encoded, Map<String, String> into) {
    if (encoded == null || encoded.isEmpty()) {
      return;
    }
    for (String pair : encoded.split("&")) {
      int eq = pair.indexOf('=');
      String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      into.putIfAbsent(name, value);
    }
  }
}
