package io.converge.consumer.http.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
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
 * and could not be stored. A body over the limit is not held (no request can fill the memory): from the write that
 * crosses it on, the body goes to the client as it is written ({@link #streamed()}), and is not stored. Not
 * thread-safe (one request).
 */
final class CapturingResponse extends HttpServletResponseWrapper {

  private final int limit;
  private ByteArrayOutputStream body = new ByteArrayOutputStream();
  /** The real response's stream once the body went over the limit; null while it is held back. */
  private OutputStream through;
  private ServletOutputStream stream;
  private PrintWriter writer;
  private String errorMessage;
  private boolean error;

  /** Holds back at most {@code limit} bytes of {@code response}'s body. */
  CapturingResponse(HttpServletResponse response, int limit) {
    super(response);
    this.limit = limit;
  }

  /** True once the body went over the limit: it is being sent as written, and can be neither replaced nor stored. */
  boolean streamed() {
    return through != null;
  }

  /** Where the handler's bytes go: held back up to the limit, then sent through. */
  private void append(byte[] b, int off, int len) throws IOException {
    if (through == null && body.size() + (long) len > limit) {
      through = getResponse().getOutputStream();
      body.writeTo(through);
      body = new ByteArrayOutputStream(0); // the held-back bytes are the client's now: free them
    }
    if (through == null) {
      body.write(b, off, len);
    } else {
      through.write(b, off, len);
    }
  }

  /** The body's sink, for the stream and the writer alike. */
  private final OutputStream sink = new OutputStream() {

    @Override
    public void write(int b) throws IOException {
      append(new byte[]{(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      append(b, off, len);
    }
  };

  /** Pushes what the handler's writer still buffers into the body (which may take it over the limit). */
  void flushWriter() {
    if (writer != null) {
      writer.flush();
    }
  }

  private void requireHeldBack() {
    if (through != null) {
      throw new IllegalStateException("The response is committed: its body went over the Idempotency-Key filter's "
          + "max-response-size (" + limit + " bytes) and is being sent");
    }
  }

  @Override
  public ServletOutputStream getOutputStream() {
    if (writer != null) {
      throw new IllegalStateException("getWriter() has already been called on this response");
    }
    if (stream == null) {
      stream = new ServletOutputStream() {

        @Override
        public void write(int b) throws IOException {
          sink.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          sink.write(b, off, len);
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
      writer = new PrintWriter(new OutputStreamWriter(sink, Charset.forName(getCharacterEncoding())));
    }
    return writer;
  }

  @Override
  public void sendError(int sc, String msg) {
    requireHeldBack();
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
    requireHeldBack();
    setStatus(sc);
    setHeader("Location", location);
    if (clearBuffer) {
      body.reset();
    }
  }

  @Override
  public void flushBuffer() throws IOException {
    if (through != null) {
      flushWriter();
      getResponse().flushBuffer();
    } // else held back until stored
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
    return through != null && getResponse().isCommitted();
  }

  @Override
  public void resetBuffer() {
    requireHeldBack();
    body.reset();
  }

  @Override
  public void reset() {
    requireHeldBack();
    super.reset();
    body.reset();
    error = false;
    errorMessage = null;
  }

  /**
   * Replaces whatever the handler wrote by {@code status} and a problem {@code problemBody}; does nothing once the body
   * is {@link #streamed()} (the client has its beginning already).
   */
  void replaceWith(int status, byte[] problemBody) {
    if (through != null) {
      return;
    }
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

  /**
   * Sends the held-back body to the client (status and headers are already on the real response); once the body is
   * {@link #streamed()}, only flushes what the handler wrote.
   */
  void release(byte[] stored) throws IOException {
    HttpServletResponse real = (HttpServletResponse) getResponse();
    if (through != null) {
      flushWriter();
      real.flushBuffer();
      return;
    }
    real.setContentLength(stored.length);
    real.getOutputStream().write(stored);
    real.flushBuffer();
  }
}
