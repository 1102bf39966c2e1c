package io.converge.consumer.http.internal;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The request as the handler of a protected endpoint sees it: its body already read (for the
 * fingerprint) and readable again, and no servlet async. An asynchronous handler would answer after
 * the filter has returned, so its response could be neither held back nor stored: refusing it here
 * makes the handler fail at once (a 500, stored) instead of replaying a wrong answer later.
 */
final class BufferedRequest extends HttpServletRequestWrapper {

  private static final String NO_ASYNC = "An Idempotency-Key endpoint cannot process a request asynchronously: "
      + "its response must be stored before it is sent";

  private final byte[] body;

  /** {@code body} null: the container keeps reading the body (a form, parsed into parameters). */
  BufferedRequest(HttpServletRequest request, byte[] body) {
    super(request);
    this.body = body;
  }

  @Override
  public boolean isAsyncSupported() {
    return false;
  }

  @Override
  public AsyncContext startAsync() {
    throw new IllegalStateException(NO_ASYNC);
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    throw new IllegalStateException(NO_ASYNC);
  }

  @Override
  public ServletInputStream getInputStream() throws IOException {
    if (body == null) {
      return super.getInputStream();
    }
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    return new ServletInputStream() {

      @Override
      public int read() {
        return in.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        return in.read(b, off, len);
      }

      @Override
      public boolean isFinished() {
        return in.available() == 0;
      }

      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setReadListener(ReadListener listener) {
        throw new UnsupportedOperationException("asynchronous reads are not supported on an Idempotency-Key endpoint");
      }
    };
  }

  @Override
  public BufferedReader getReader() throws IOException {
    if (body == null) {
      return super.getReader();
    }
    String encoding = getCharacterEncoding();
    Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
    return new BufferedReader(new InputStreamReader(getInputStream(), charset));
  }

  @Override
  public int getContentLength() {
    return body == null ? super.getContentLength() : body.length;
  }

  @Override
  public long getContentLengthLong() {
    return body == null ? super.getContentLengthLong() : body.length;
  }
}
