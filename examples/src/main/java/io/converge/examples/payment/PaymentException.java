package io.converge.examples.payment;

import io.converge.core.ConvergeException;
import java.util.LinkedHashMap;
import java.util.Map;

/** A refused payment request; {@link #status()} is its HTTP status and {@link #body()} what the client gets. */
final class PaymentException extends ConvergeException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final String code;
  private final transient Object first;

  PaymentException(int status, String code, String message, Object first) {
    super(message);
    this.status = status;
    this.code = code;
    this.first = first;
  }

  int status() {
    return status;
  }

  Map<String, Object> body() {
    Map<String, Object> b = new LinkedHashMap<>();
    b.put("error", code);
    b.put("detail", getMessage());
    if (first != null) {
      b.put("first", first);
    }
    return b;
  }
}
