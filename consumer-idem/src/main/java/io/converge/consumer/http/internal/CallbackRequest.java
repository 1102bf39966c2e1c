package io.converge.consumer.http.internal;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * A verified callback as the Idempotency-Key filter and the handler see it: its body re-readable (a
 * {@link BufferedRequest}) and one header set by the filter, the key it derived; a header of that name the client sent
 * is hidden, so no client can choose its own key.
 */
final class CallbackRequest extends HttpServletRequestWrapper {

  private final String keyHeader;
  private final String key;

  CallbackRequest(HttpServletRequest request, byte[] body, String keyHeader, String key) {
    super(new BufferedRequest(request, body));
    this.keyHeader = keyHeader;
    this.key = key;
  }

  @Override
  public String getHeader(String name) {
    return keyHeader.equalsIgnoreCase(name) ? key : super.getHeader(name);
  }

  @Override
  public Enumeration<String> getHeaders(String name) {
    return keyHeader.equalsIgnoreCase(name) ? Collections.enumeration(List.of(key)) : super.getHeaders(name);
  }

  @Override
  public Enumeration<String> getHeaderNames() {
    List<String> names = new ArrayList<>();
    for (String n : Collections.list(super.getHeaderNames())) {
      if (!keyHeader.equalsIgnoreCase(n)) {
        names.add(n);
      }
    }
    names.add(keyHeader);
    return Collections.enumeration(names);
  }
}
