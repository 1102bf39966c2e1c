package io.converge.consumer.http.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Holds the handler's body back until the response is stored: nothing reaches the client (not even on
 * flush) before the second transaction has run, so a client never holds a response that a retry would
 * not replay. Status and headers pass through to the real response as they are set. {@code sendError}
 * becomes a problem body here, because the container's error page would be rendered after this filter
 * and could not be stored. Not thread-safe (one request).
 */
final class CapturingResponse extends HttpServletResponseWrapper {

  private final ByteArrayOutputStream body = new ByteArrayOutputStream();
  private ServletOutputStream stream;
  private PrintWriter writer;
  private String errorMessage;
  private boolean error;

  CapturingResponse(HttpServletResponse response) {
    super(response);
  }

  @Override
  public ServletOutputStream getOutputStream() {
    if (writer != null) {
      throw new IllegalStateException("getWriter() has already been called on this response");
    }
    if (stream == null) {
      stream = new ServletOutputStream() {

        @Override
        public void write(int b) {
          body.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          body.write(b, off, len);
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
          throw new UnsupportedOperationException(
              "asynchronous writes are not supported on an Idempotency-Key endpoint");
        }
      };
    }
    return stream;
  }

  @Override
  public PrintWriter getWriter() {
    if (stream != null) {
      throw new IllegalStateException("getOutputStream() has already been called on this response");
    }
    if (writer == null) {
      writer = new PrintWriter(new OutputStreamWriter(body, Charset.forName(getCharacterEncoding())));
    }
    return writer;
  }

  @Override
  public void sendError(int sc, String msg) {
    setStatus(sc);
    error = true;
    errorMessage = msg;
    body.reset();
  }

  @Override
  public void sendError(int sc) {
    sendError(sc, null);
  }

  @Override
  public void sendRedirect(String location) {
    sendRedirect(location, SC_FOUND, true);
  }

  @Override
  public void sendRedirect(String location, int sc, boolean clearBuffer) {
    setStatus(sc);
    setHeader("Location", location);
    if (clearBuffer) {
      body.reset();
    }
  }

  @Override
  public void flushBuffer() {
    // held back until stored
  }

  @Override
  public void setContentLength(int len) {
    // the length is set when the body is released
  }

  @Override
  public void setContentLengthLong(long len) {
    // the length is set when the body is released
  }

  @Override
  public boolean isCommitted() {
    return false;
  }

  @Override
  public void resetBuffer() {
    body.reset();
  }

  @Override
  public void reset() {
    super.reset();
    body.reset();
    error = false;
    errorMessage = null;
  }

  /** Replaces whatever the handler wrote by {@code status} and a problem {@code problemBody}. */
  void replaceWith(int status, byte[] problemBody) {
    super.reset();
    writer = null;
    stream = null;
    body.reset();
    setStatus(status);
    setContentType(Problems.CONTENT_TYPE);
    body.writeBytes(problemBody);
  }

  /** The response as it will be stored, keeping only {@code replayed} headers. */
  StoredResponse toStored(Collection<String> replayed) {
    if (writer != null) {
      writer.flush();
    }
    if (error && body.size() == 0) {
      String reason = "HTTP " + getStatus();
      setContentType(Problems.CONTENT_TYPE);
      body.writeBytes(Problems.body("about:blank", reason, getStatus(), errorMessage));
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String name : replayed) {
      Collection<String> values = name.toLowerCase(Locale.ROOT).equals("content-type")
          ? (getContentType() == null ? List.of() : List.of(getContentType()))
          : getHeaders(name);
      if (values != null && !values.isEmpty()) {
        headers.put(name, String.join(", ", values));
      }
    }
    return new StoredResponse(getStatus(), headers, body.toByteArray());
  }

  /** Sends the held-back body to the client. Status and headers are already on the real response. */
  void release(byte[] stored) throws IOException {
    HttpServletResponse real = (HttpServletResponse) getResponse();
    real.setContentLength(stored.length);
    real.getOutputStream().write(stored);
    real.flushBuffer();
  }
}
