package io.converge.console.web;

import io.converge.core.internal.Require;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a {@link Console} in a servlet container (the Spring Boot auto-configuration maps it to
 * {@code /converge/console/*}). Who acts is the request's principal or, when there is none and an operator
 * header is set, that header (set it only behind a proxy that authenticates and sets it); acting needs the
 * action role (default {@value #DEFAULT_ACTION_ROLE}): a container role ({@code isUserInRole}), a Spring
 * Security authority of that name, or, for a header-named operator, a role in the role header. Anyone else
 * who reaches the console reads it, unless a read role is set. Unless remote requests are allowed, only
 * requests made on this host's loopback interface and not through a proxy (no {@code Forwarded},
 * {@code X-Forwarded-For}, {@code X-Forwarded-Host}, {@code X-Real-IP}) are served. Thread-safe.
 */
public final class ConsoleServlet extends HttpServlet {

  /** The role or authority an operator needs to act, unless configured otherwise. */
  public static final String DEFAULT_ACTION_ROLE = "CONVERGE_OPERATOR";

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ConsoleServlet.class);

  private final transient Console console;
  private final transient ServletAccess access;

  /**
   * A servlet with the default action role, no read role and no role header.
   *
   * @param console the console, built with the servlet's mapping as its base path
   * @param operatorHeader the header naming the operator when there is no principal; null: none
   * @param allowRemote whether requests from other hosts are served
   */
  public ConsoleServlet(Console console, String operatorHeader, boolean allowRemote) {
    this(builder(console).operatorHeader(operatorHeader).allowRemote(allowRemote));
  }

  private ConsoleServlet(Builder b) {
    this.console = b.console;
    this.access = new ServletAccess(b.operatorHeader, b.roleHeader, b.actionRole, b.readRole, b.allowRemote);
  }

  /** A builder of the servlet serving {@code console} (built with the servlet's mapping as its base path). */
  public static Builder builder(Console console) {
    return new Builder(Objects.requireNonNull(console, "console"));
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String notLocal = access.loopbackRefusal(req);
    if (notLocal != null) {
      LOG.debug("Console request from {} refused: {}", req.getRemoteAddr(), notLocal);
      resp.sendError(403, notLocal);
      return;
    }
    String refused = SameOrigin.refusal(req.getMethod(), req.getHeader("Host"), req.getHeader("Origin"),
        req.getHeader("Sec-Fetch-Site"), !access.allowRemote());
    if (refused != null) {
      resp.sendError(403, refused);
      return;
    }
    String operator = access.operator(req);
    if (!access.mayRead(req)) {
      LOG.warn("Console: {} refused: reading needs the role {}", operator == null ? "anonymous" : operator,
          access.readers());
      resp.sendError(403, "The Converge console needs the role " + access.readers());
      return;
    }
    Map<String, String> params = new HashMap<>();
    req.getParameterMap().forEach((name, values) -> {
      if (values.length > 0) {
        params.put(name, values[0]);
      }
    });
    String path = req.getPathInfo() == null ? "/" : req.getPathInfo();
    ConsoleResponse response = console.handle(new ConsoleRequest(req.getMethod(), path, params, operator,
        access.mayAct(req)));
    resp.setStatus(response.status());
    resp.setContentType(ConsoleResponse.CONTENT_TYPE);
    ConsoleResponse.HEADERS.forEach(resp::setHeader);
    byte[] bytes = response.html().getBytes(StandardCharsets.UTF_8);
    resp.setContentLength(bytes.length);
    if (!"HEAD".equals(req.getMethod())) {
      resp.getOutputStream().write(bytes);
    }
  }

  /** Builds a {@link ConsoleServlet}. Not thread-safe. */
  public static final class Builder {

    private final Console console;
    private String operatorHeader;
    private String roleHeader;
    private String actionRole = DEFAULT_ACTION_ROLE;
    private String readRole;
    private boolean allowRemote;

    private Builder(Console console) {
      this.console = console;
    }

    /**
     * The header naming the operator when there is no principal (set it only behind a proxy that
     * authenticates and sets it); default none.
     */
    public Builder operatorHeader(String header) {
      this.operatorHeader = blankToNull(header);
      return this;
    }

    /**
     * The header listing, comma-separated, the roles of the operator named by the operator header (set by the
     * same proxy); default none: a header-named operator reads but cannot act.
     */
    public Builder roleHeader(String header) {
      this.roleHeader = blankToNull(header);
      return this;
    }

    /** The role or authority an operator needs to act; default {@value #DEFAULT_ACTION_ROLE}. */
    public Builder actionRole(String role) {
      this.actionRole = role;
      return this;
    }

    /**
     * The role or authority needed to read the console (the action role reads too); default none: on a
     * loopback-only console anyone who reaches it reads, every tenant's items (the console is not scoped by
     * tenant); on one that {@linkplain #allowRemote serves other hosts}, only the action role's holders.
     */
    public Builder readRole(String role) {
      this.readRole = blankToNull(role);
      return this;
    }

    /** Whether requests from other hosts (or through a proxy) are served; default false. */
    public Builder allowRemote(boolean allowRemote) {
      this.allowRemote = allowRemote;
      return this;
    }

    /**
     * The servlet.
     *
     * @throws IllegalArgumentException when the action role is blank or a header is not a header name, quoting the
     *     value
     */
    public ConsoleServlet build() {
      if (actionRole == null || actionRole.isBlank()) {
        throw new IllegalArgumentException("console.actionRole must not be blank, but was '" + actionRole + "'");
      }
      headerName("console.operatorHeader", operatorHeader);
      headerName("console.roleHeader", roleHeader);
      actionRole = actionRole.strip();
      return new ConsoleServlet(this);
    }

    /** A header name is an HTTP token (RFC 9110); none (null) is allowed. */
    private static void headerName(String property, String header) {
      Require.that(header == null || header.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+"), property, "be a header name",
          header);
    }

    private static String blankToNull(String s) {
      return s == null || s.isBlank() ? null : s.strip();
    }
  }
}
