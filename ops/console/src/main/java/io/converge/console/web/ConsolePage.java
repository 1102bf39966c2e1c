package io.converge.console.web;

/**
 * A page of the console beyond its own (overview, one list per kind, audit): for example a trace page.
 * Registered with {@link Console.Builder#page(ConsolePage)} or, to be picked up by {@code converge console} and
 * the Spring Boot auto-configuration alike, listed in {@code META-INF/services/io.converge.console.web.ConsolePage}
 * (a public no-argument constructor). A page only reads: it is served for {@code GET} and must not change
 * anything. Implementations must be thread-safe.
 */
public interface ConsolePage {

  /** Its path below the console's root: {@code /} and one lowercase segment, e.g. {@code /trace}. */
  String path();

  /** Its title in the navigation bar and the page's heading. */
  String title();

  /**
   * The page's body: HTML in which every value from the database or the request is escaped with
   * {@link Html#escape}. The console wraps it with its layout (navigation, styles).
   *
   * @param request the GET request, its parameters included
   * @param context the console's data source, inspector and links
   */
  String render(ConsoleRequest request, ConsoleContext context);
}
