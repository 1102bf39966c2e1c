package io.converge.console.trace;

import io.converge.console.web.ConsoleContext;
import io.converge.console.web.ConsolePage;
import io.converge.console.web.ConsoleRequest;
import io.converge.console.web.Html;
import java.util.List;
import java.util.Map;

/**
 * The console's trace page ({@code /trace?id=...}): a form for a business id, message id or Idempotency-Key and
 * its {@link Timeline}, oldest first. Listed in {@code META-INF/services/io.converge.console.web.ConsolePage}, so
 * {@code converge console} and the Spring Boot console serve it. Read-only; thread-safe.
 */
public final class TracePage implements ConsolePage {

  /** The page; the console creates it through the service loader. */
  public TracePage() {
  }

  @Override
  public String path() {
    return "/trace";
  }

  @Override
  public String title() {
    return "Trace";
  }

  @Override
  public String render(ConsoleRequest request, ConsoleContext context) {
    String id = request.param("id");
    StringBuilder b = new StringBuilder("<form class=\"filter\" method=\"get\" action=\"")
        .append(context.href("/trace")).append("\"><label>business id, message id or Idempotency-Key "
            + "<input name=\"id\" size=\"48\" value=\"")
        .append(Html.escape(id == null ? "" : id)).append("\"></label> <button type=\"submit\">trace</button></form>");
    if (id == null || id.isBlank()) {
      return b.toString();
    }
    List<TimelineEvent> events = Timeline.of(context.dataSource()).trace(id);
    b.append("<p id=\"trace-count\">").append(events.size()).append(" events for <code>").append(Html.escape(id))
        .append("</code></p>");
    if (events.isEmpty()) {
      return b.append("<p>Converge recorded nothing about it (or its rows were purged).</p>").toString();
    }
    b.append("<table id=\"timeline\"><tr><th>when</th><th>table</th><th>about</th><th>what</th><th>details</th></tr>");
    for (TimelineEvent e : events) {
      b.append("<tr><td>").append(Html.escape(e.at())).append("</td><td>").append(Html.escape(e.source()))
          .append("</td><td><a href=\"").append(context.href("/trace", "id", e.subject())).append("\">")
          .append(Html.escape(e.subject())).append("</a></td><td>").append(Html.escape(e.what())).append("</td><td>");
      for (Map.Entry<String, String> d : e.details().entrySet()) {
        b.append(Html.escape(d.getKey())).append("=").append(Html.escape(d.getValue())).append("<br>");
      }
      b.append("</td></tr>");
    }
    return b.append("</table>").toString();
  }
}
