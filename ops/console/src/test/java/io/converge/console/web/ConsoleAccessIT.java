package io.converge.console.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.converge.broker.postgres.ConvergePostgres;
import io.converge.core.Migrations;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.Principal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.valves.RemoteIpValve;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.web.filter.ForwardedHeaderFilter;

/**
 * Who may use the console served by {@link ConsoleServlet} in a real Tomcat, against the embedded PostgreSQL:
 * an authenticated user without the action role reads but cannot act (403, the dead letter untouched); a
 * confirmation token belongs to the operator it was issued to; a loopback-only console is not opened by a
 * forwarded {@code X-Forwarded-For: 127.0.0.1}, whether Tomcat ({@link RemoteIpValve}, Spring Boot's
 * {@code server.forward-headers-strategy=native}) or Spring ({@link ForwardedHeaderFilter}, {@code framework})
 * rewrites the remote address. The application's login is played by a filter that takes the user and roles
 * from test headers, as Spring Security's request wrapper answers {@code getUserPrincipal} and
 * {@code isUserInRole}.
 */
class ConsoleAccessIT {

  private static DataSource ds;
  private static Tomcat tomcat;
  private static int port;

  @BeforeAll
  static void start() throws Exception {
    ds = ConvergePostgres.shared().newSchema("consoleaccess");
    Migrations.apply(ds, "consumer");
    Console native_ = Console.builder().dataSource(ds).discoverPages(false).basePath("/native/console").build();
    Console framework = Console.builder().dataSource(ds).discoverPages(false).migrate(false)
        .basePath("/framework/console").build();
    tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat-console").toString());
    tomcat.setPort(0); // every address: the forwarded tests connect through a non-loopback one
    tomcat.getConnector();

    Context nativeContext = mount("/native", new ConsoleServlet(native_, null, false), List.of());
    RemoteIpValve valve = new RemoteIpValve();
    valve.setInternalProxies(".*"); // the test client is the trusted proxy
    nativeContext.getPipeline().addValve(valve);
    mount("/framework", new ConsoleServlet(framework, null, false), List.of(new ForwardedHeaderFilter()));
    Console remote = Console.builder().dataSource(ds).discoverPages(false).migrate(false)
        .basePath("/remote/console").build();
    mount("/remote", ConsoleServlet.builder(remote).allowRemote(true).build(), List.of());
    Console viewers = Console.builder().dataSource(ds).discoverPages(false).migrate(false)
        .basePath("/viewers/console").build();
    mount("/viewers", ConsoleServlet.builder(viewers).allowRemote(true).readRole("CONVERGE_VIEWER").build(),
        List.of());
    tomcat.start();
    port = tomcat.getConnector().getLocalPort();
  }

  @AfterAll
  static void stop() throws Exception {
    if (tomcat != null) {
      tomcat.stop();
      tomcat.destroy();
    }
  }

  @Test
  void aUserWithoutTheActionRoleReadsButCannotAct() throws Exception {
    long id = deadLetter("d-role");
    Served list = send(loopback(), "GET", "/native/console/kind/consumer-dlq", "carol", "", "");
    assertThat(list.status).as("reading needs no role").isEqualTo(200);
    assertThat(list.body).contains("d-role");
    Served confirm = send(loopback(), "GET", "/native/console/confirm?action=discard-dead-letter&target=" + id,
        "carol", "", "");
    assertThat(confirm.body).doesNotContain("name=\"token\"");
    // a token minted for an operator (with the role), then presented by carol, who has none
    String token = token(id, "alice");
    Served act = send(loopback(), "POST", "/native/console/act", "carol", "",
        "action=discard-dead-letter&target=" + id + "&token=" + token + "&note=x");
    assertThat(act.status).isEqualTo(403);
    assertThat(status(id)).as("nothing changed").isEqualTo("PARKED");
    assertThat(count("SELECT count(*) FROM converge_console_audit WHERE target = '" + id + "'")).isZero();
  }

  @Test
  void aConsoleServingOtherHostsShowsEveryTenantsItemsOnlyToItsRoles() throws Exception {
    deadLetter("d-remote");
    String page = "/console/kind/consumer-dlq";
    Served anyone = send(loopback(), "GET", "/remote" + page, "carol", "", "");
    assertThat(anyone.status).as("no read role configured: the action role reads").isEqualTo(403);
    assertThat(anyone.body).contains("CONVERGE_OPERATOR").doesNotContain("d-remote");
    assertThat(send(loopback(), "GET", "/remote" + page, "alice", "CONVERGE_OPERATOR", "").body)
        .contains("d-remote");
    assertThat(send(loopback(), "GET", "/viewers" + page, "carol", "", "").status).isEqualTo(403);
    Served viewer = send(loopback(), "GET", "/viewers" + page, "dave", "CONVERGE_VIEWER", "");
    assertThat(viewer.status).isEqualTo(200);
    assertThat(viewer.body).contains("d-remote");
  }

  @Test
  void aTokenIssuedToOneOperatorIsRefusedToAnother() throws Exception {
    long id = deadLetter("d-token");
    String token = token(id, "alice");
    Served act = send(loopback(), "POST", "/native/console/act", "bob", "CONVERGE_OPERATOR",
        "action=discard-dead-letter&target=" + id + "&token=" + token + "&note=x");
    assertThat(act.status).isEqualTo(403);
    assertThat(act.body).contains("issued to another operator");
    assertThat(status(id)).as("nothing changed").isEqualTo("PARKED");

    String own = token(id, "bob");
    Served mine = send(loopback(), "POST", "/native/console/act", "bob", "CONVERGE_OPERATOR",
        "action=discard-dead-letter&target=" + id + "&token=" + own + "&note=duplicate");
    assertThat(mine.status).isEqualTo(200);
    assertThat(status(id)).isEqualTo("DISCARDED");
  }

  @Test
  void aForwardedLoopbackAddressDoesNotOpenALoopbackOnlyConsole() throws Exception {
    InetAddress outside = nonLoopback();
    for (String context : List.of("/native", "/framework")) {
      Served forwarded = send(outside, "GET", context + "/console/", "alice", "CONVERGE_OPERATOR", "",
          "X-Forwarded-For", "127.0.0.1");
      assertThat(forwarded.status).as(context + ": X-Forwarded-For 127.0.0.1 from " + outside).isEqualTo(403);
      Served standard = send(outside, "GET", context + "/console/", "alice", "CONVERGE_OPERATOR", "",
          "Forwarded", "for=127.0.0.1");
      assertThat(standard.status).as(context + ": Forwarded for=127.0.0.1 from " + outside).isEqualTo(403);
    }
    assertThat(send(loopback(), "GET", "/native/console/", "alice", "CONVERGE_OPERATOR", "").status)
        .as("this host, not forwarded").isEqualTo(200);
  }

  /** The token of alice's (or bob's) confirmation page of discarding {@code id}, both with the role. */
  private static String token(long id, String operator) throws Exception {
    Served confirm = send(loopback(), "GET", "/native/console/confirm?action=discard-dead-letter&target=" + id,
        operator, "CONVERGE_OPERATOR", "");
    Matcher m = Pattern.compile("name=\"token\" value=\"([^\"]+)\"").matcher(confirm.body);
    assertThat(m.find()).as("a token on " + confirm.body).isTrue();
    return m.group(1);
  }

  private static Context mount(String path, ConsoleServlet servlet, List<Filter> filters) {
    Context context = tomcat.addContext(path, null);
    Tomcat.addServlet(context, "console", servlet);
    context.addServletMappingDecoded("/console/*", "console");
    int i = 0;
    for (Filter filter : filters) {
      addFilter(context, "filter" + i++, filter);
    }
    addFilter(context, "login", (req, resp, chain) -> chain.doFilter(new LoggedIn((HttpServletRequest) req), resp));
    return context;
  }

  private static void addFilter(Context context, String name, Filter filter) {
    FilterDef def = new FilterDef();
    def.setFilterName(name);
    def.setFilter(filter);
    context.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName(name);
    map.addURLPattern("/*");
    context.addFilterMap(map);
  }

  /** The application's login: {@code X-Test-User} authenticated, with the roles in {@code X-Test-Roles}. */
  private static final class LoggedIn extends HttpServletRequestWrapper {

    LoggedIn(HttpServletRequest request) {
      super(request);
    }

    @Override
    public Principal getUserPrincipal() {
      String user = getHeader("X-Test-User");
      return user == null ? null : () -> user;
    }

    @Override
    public boolean isUserInRole(String role) {
      String roles = getHeader("X-Test-Roles");
      return getUserPrincipal() != null && roles != null && Set.of(roles.split(",")).contains(role);
    }
  }

  private record Served(int status, String body) {
  }

  /**
   * One HTTP/1.1 request on its own connection to {@code address}, with {@code Host: 127.0.0.1} (the name a
   * loopback-only console answers; a remote client can send any) and the extra header pairs.
   */
  private static Served send(InetAddress address, String method, String target, String user, String roles,
      String form, String... headers) throws Exception {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("Host", "127.0.0.1:" + port);
    h.put("Connection", "close");
    h.put("X-Test-User", user);
    if (!roles.isEmpty()) {
      h.put("X-Test-Roles", roles);
    }
    for (int i = 0; i + 1 < headers.length; i += 2) {
      h.put(headers[i], headers[i + 1]);
    }
    byte[] body = form.getBytes(StandardCharsets.UTF_8);
    if ("POST".equals(method)) {
      h.put("Content-Type", "application/x-www-form-urlencoded");
      h.put("Content-Length", Integer.toString(body.length));
    }
    StringBuilder request = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    h.forEach((name, value) -> request.append(name).append(": ").append(value).append("\r\n"));
    request.append("\r\n");
    try (Socket socket = new Socket(address, port)) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      int status = Integer.parseInt(response.substring(9, 12));
      int end = response.indexOf("\r\n\r\n");
      return new Served(status, end < 0 ? "" : response.substring(end + 4));
    }
  }

  private static InetAddress loopback() {
    return InetAddress.getLoopbackAddress();
  }

  /**
   * An address of this machine that is not loopback, so that Tomcat sees a remote peer; a machine with none
   * is tested through the loopback interface (a forwarded request is refused there too).
   */
  private static InetAddress nonLoopback() throws Exception {
    for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
      if (nic.isUp() && !nic.isLoopback()) {
        for (InetAddress a : nic.inetAddresses().toList()) {
          if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
            return a;
          }
        }
      }
    }
    return loopback();
  }

  private static long deadLetter(String messageId) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("INSERT INTO converge_dlq (tenant, consumer_group, topic, message_id,"
            + " reason_code, reason, attempts, headers, payload, status, created_at) VALUES ('t1', 'billing',"
            + " 'charges', '" + messageId + "', 'RETRIES_EXHAUSTED', 'ledger down', 3, '', '\\x00', 'PARKED',"
            + " now() - interval '1 hour') RETURNING id")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String status(long id) throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT status FROM converge_dlq WHERE id = " + id)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long count(String sql) throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
