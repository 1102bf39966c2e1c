package io.converge.console.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.HashMap;
import java.util.Map;

/**
 * Serves a {@link Console} in a servlet container (the Spring Boot auto-configuration maps it to
 * {@code /converge/console/*}). Who acts is the request's principal or, when there is none and
 * {@code operatorHeader} is set, that header (set it only behind a proxy that authenticates and sets it); a
 * request with neither can look but not act. Requests from another host than this one are refused unless
 * {@code allowRemote}. Thread-safe.
 */
public final class ConsoleServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  private final transient Console console;
  private final String operatorHeader;
  private final boolean allowRemote;

  /**
   * @param console the console, built with the servlet's mapping as its base path
   * @param operatorHeader the header naming the operator when there is no principal; null: none
   * @param allowRemote whether requests from other hosts are served
   */
  public ConsoleServlet(Console console, String operatorHeader, boolean allowRemote) {
    this.console = console;
    this.operatorHeader = operatorHeader == null || operatorHeader.isBlank() ? null : operatorHeader;
    this.allowRemote = allowRemote;
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    if (!allowRemote && !InetAddress.getByName(req.getRemoteAddr()).isLoopbackAddress()) {
      resp.sendError(403, "The Converge console serves this host only (converge.console.allow-remote)");
      return;
    }
    String refused = SameOrigin.refusal(req.getMethod(), req.getHeader("Host"), req.getHeader("Origin"),
        req.getHeader("Sec-Fetch-Site"), !allowRemote);
    if (refused != null) {
      resp.sendError(403, refused);
      return;
    }
    Map<String, String> params = new HashMap<>();
    req.getParameterMap().forEach((name, values) -> {
      if (values.length > 0) {
        params.put(name, values[0]);
      }
    });
    Principal principal = req.getUserPrincipal();
    String operator = principal != null ? principal.getName()
        : operatorHeader != null ? req.getHeader(operatorHeader) : null;
    String path = req.getPathInfo() == null ? "/" : req.getPathInfo();
    ConsoleResponse response = console.handle(new ConsoleRequest(req.getMethod(), path, params, operator));
    resp.setStatus(response.status());
    resp.setContentType(ConsoleResponse.CONTENT_TYPE);
    ConsoleResponse.HEADERS.forEach(resp::setHeader);
    byte[] bytes = response.html().getBytes(StandardCharsets.UTF_8);
    resp.setContentLength(bytes.length);
    if (!"HEAD".equals(req.getMethod())) {
      resp.getOutputStream().write(bytes);
    }
  }
}
