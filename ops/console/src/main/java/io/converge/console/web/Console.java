package io.converge.console.web;

import io.converge.console.action.Action;
import io.converge.console.action.ConsoleActions;
import io.converge.console.inspect.Inspector;
import io.converge.console.inspect.Inspector.Filter;
import io.converge.console.inspect.Inspector.Summary;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import io.converge.console.inspect.StuckThresholds;
import io.converge.core.ConvergeException;
import io.converge.core.Migrations;
import io.converge.core.internal.Require;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console: server-rendered pages of everything stuck (an overview, one list per {@link StuckKind} with
 * filters, the audit, and the registered {@link ConsolePage}s) and the audited actions, each behind a
 * confirmation page whose single-use token its POST must carry; a GET never changes anything. Independent of
 * the HTTP server: {@link ConsoleHttpServer} (the JDK's) and {@link ConsoleServlet} (a servlet container)
 * turn their requests into {@link ConsoleRequest}s. Thread-safe.
 */
public final class Console {

  private static final Logger LOG = LoggerFactory.getLogger(Console.class);
  private static final Pattern PAGE_PATH = Pattern.compile("/[a-z][a-z0-9-]{0,40}");

  private final ConsoleContext context;
  private final ConsoleActions actions;
  private final List<ConsolePage> pages;
  private final Map<String, ConsolePage> byPath = new HashMap<>();
  private final Tokens tokens;

  private Console(Builder b) {
    this.context = new ConsoleContext(b.dataSource, Inspector.of(b.dataSource, b.thresholds), b.basePath);
    this.actions = ConsoleActions.on(b.dataSource);
    this.pages = List.copyOf(b.pages);
    this.tokens = new Tokens(b.clock);
    for (ConsolePage page : pages) {
      byPath.put(page.path(), page);
    }
  }

  /** A builder; the data source is required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The context its pages get (data source, inspector, links). */
  public ConsoleContext context() {
    return context;
  }

  /** Answers {@code request}; never throws (a failure is an error page). */
  public ConsoleResponse handle(ConsoleRequest request) {
    String path = request.path();
    try {
      if ("POST".equals(request.method())) {
        return "/act".equals(path) ? act(request)
            : message(405, "Not allowed", path, "Only the confirmation of an action is posted.");
      }
      if (!"GET".equals(request.method()) && !"HEAD".equals(request.method())) {
        return message(405, "Not allowed", path, "The console answers GET and POST only.");
      }
      if ("/".equals(path)) {
        List<Summary> summaries = new ArrayList<>();
        for (StuckKind kind : StuckKind.values()) {
          summaries.add(context.inspector().summary(kind));
        }
        return page(200, "What is stuck", "/", Views.overview(context, summaries));
      }
      if (path.startsWith("/kind/")) {
        return list(request, StuckKind.ofSlug(path.substring("/kind/".length())));
      }
      if ("/confirm".equals(path)) {
        return confirm(request);
      }
      if ("/audit".equals(path)) {
        return page(200, "Audit", "/audit", Views.audit(actions.recent(200)));
      }
      if ("/act".equals(path)) {
        return message(405, "Not allowed", path, "An action is confirmed with POST, from its confirmation"
            + " page; a GET never changes anything.");
      }
      ConsolePage page = byPath.get(path);
      if (page != null) {
        return page(200, page.title(), path, page.render(request, context));
      }
      return message(404, "Not found", path, "No page " + path + ".");
    } catch (IllegalArgumentException e) {
      return message(400, "Bad request", path, e.getMessage());
    } catch (ConvergeException e) {
      LOG.warn("Console page {} failed: {}", path, e.toString());
      return message(503, "Database unavailable", path, e.getMessage()
          + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""));
    }
  }

  private ConsoleResponse list(ConsoleRequest request, StuckKind kind) {
    Map<String, String> form = new LinkedHashMap<>();
    for (String field : List.of("tenant", "topic", "key", "minAge", "limit", "stuck")) {
      form.put(field, request.param(field));
    }
    Duration minAge = form.get("stuck") != null ? null
        : form.get("minAge") == null ? Duration.ZERO : Html.parseAge(form.get("minAge"));
    int limit = form.get("limit") == null ? 100 : parseLimit(form.get("limit"));
    Filter filter = new Filter(form.get("tenant"), form.get("topic"), form.get("key"), minAge, limit);
    List<StuckItem> items = context.inspector().list(kind, filter);
    return page(200, kind.title(), "/kind/" + kind.slug(), Views.list(context, kind, form, filter,
        context.inspector().thresholds().of(kind), items));
  }

  private ConsoleResponse confirm(ConsoleRequest request) {
    Action action = action(request);
    String target = required(request, "target");
    StuckItem item = find(action, target);
    String token = request.mayAct() ? tokens.issue(purpose(action, target), request.operator()) : null;
    return page(200, "Confirm: " + action.title(), "/kind/" + action.kind().slug(),
        Views.confirm(context, action, target, item, token, request.operator(), request.mayAct()));
  }

  private ConsoleResponse act(ConsoleRequest request) {
    Action action = action(request);
    String target = required(request, "target");
    if (request.operator() == null) {
      return message(403, "Who are you?", "/act", "Who you are is not known: the decision cannot be"
          + " recorded.");
    }
    if (!request.mayAct()) {
      LOG.warn("Console: {} refused to {} {}: the operator does not hold the console's action role",
          request.operator(), action, target);
      return message(403, "Not allowed", "/act", request.operator() + " may read the console but not act:"
          + " an action needs the console's action role.");
    }
    switch (tokens.redeem(request.param("token"), purpose(action, target), request.operator())) {
      case VALID -> {
      }
      case OTHER_OPERATOR -> {
        LOG.warn("Console: {} refused to {} {}: the confirmation was issued to another operator",
            request.operator(), action, target);
        return message(403, "Not your confirmation", "/act", "This confirmation was issued to another operator:"
            + " open the action's confirmation page yourself.");
      }
      default -> {
        return message(403, "Not confirmed", "/act", "This confirmation is expired, already used or not"
            + " this console's: open the action's confirmation page again.");
      }
    }
    boolean done = actions.perform(action, target, request.operator(), request.param("note"));
    return page(200, action.title(), "/kind/" + action.kind().slug(), Views.result(context, action, target, done));
  }

  /** The listed item {@code action} would act on, or null when it is not listed any more. */
  private StuckItem find(Action action, String target) {
    Filter all = Filter.all().limit(Filter.MAX_LIMIT);
    for (StuckItem item : context.inspector().list(action.kind(), all)) {
      if (target.equals(action.target(item))) {
        return item;
      }
    }
    return null;
  }

  private static String purpose(Action action, String target) {
    return action.name() + '\n' + target;
  }

  private static Action action(ConsoleRequest request) {
    return Action.ofSlug(required(request, "action"));
  }

  private static String required(ConsoleRequest request, String name) {
    String value = request.param(name);
    if (value == null) {
      throw new IllegalArgumentException("the parameter " + name + " is required");
    }
    return value;
  }

  private static int parseLimit(String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("limit must be a number from 1 to 10000, but was " + text, e);
    }
  }

  private ConsoleResponse message(int status, String title, String here, String text) {
    return page(status, title, here, Views.message(text));
  }

  private ConsoleResponse page(int status, String title, String here, String body) {
    return new ConsoleResponse(status, Layout.page(context, title, here, pages, body));
  }

  /** Builds a {@link Console}. Not thread-safe. */
  public static final class Builder {

    private DataSource dataSource;
    private StuckThresholds thresholds = StuckThresholds.defaults();
    private String basePath = "";
    private final List<ConsolePage> pages = new ArrayList<>();
    private boolean discoverPages = true;
    private boolean migrate = true;
    private Clock clock = Clock.systemUTC();

    private Builder() {
    }

    /** The database holding Converge's tables (its current schema); required. */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /** When items become stuck; default {@link StuckThresholds#defaults()}. */
    public Builder thresholds(StuckThresholds thresholds) {
      this.thresholds = Objects.requireNonNull(thresholds, "thresholds");
      return this;
    }

    /** The console's root as the browser sees it, e.g. {@code /converge/console}; default {@code ""}. */
    public Builder basePath(String basePath) {
      this.basePath = basePath == null ? "" : basePath.replaceAll("/+$", "");
      return this;
    }

    /** Adds a page. */
    public Builder page(ConsolePage page) {
      pages.add(Objects.requireNonNull(page, "page"));
      return this;
    }

    /** Whether the pages listed in {@code META-INF/services} are added; default true. */
    public Builder discoverPages(boolean discover) {
      this.discoverPages = discover;
      return this;
    }

    /** Whether {@link #build()} applies the console's migration (its audit table); default true. */
    public Builder migrate(boolean migrate) {
      this.migrate = migrate;
      return this;
    }

    /** The clock of the confirmation tokens; default UTC. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The console, after applying the {@code console} migration (unless turned off).
     *
     * @throws IllegalArgumentException when a setting is invalid (naming it and quoting the value) or two pages share
     *     a path
     */
    public Console build() {
      if (dataSource == null) {
        throw new IllegalArgumentException("console.dataSource is required, but was null");
      }
      Require.that(basePath.isEmpty() || basePath.matches("(/[A-Za-z0-9._-]+)+"), "console.basePath",
          "be empty or /segment[/segment...]", basePath);
      if (discoverPages) {
        ServiceLoader.load(ConsolePage.class).forEach(pages::add);
      }
      Map<String, ConsolePage> seen = new HashMap<>();
      for (ConsolePage page : pages) {
        if (!PAGE_PATH.matcher(page.path()).matches() || List.of("/kind", "/confirm", "/act", "/audit")
            .contains(page.path())) {
          throw new IllegalArgumentException(
              "console.pages: a page's path is / and one free lowercase segment, but was "
                  + page.path() + " (" + page.getClass().getName() + ")");
        }
        if (seen.put(page.path(), page) != null) {
          throw new IllegalArgumentException("console.pages: two pages have the path " + page.path());
        }
      }
      if (migrate) {
        Migrations.apply(dataSource, "console");
      }
      return new Console(this);
    }
  }
}
