package io.converge.console.web;

import static io.converge.console.web.Html.escape;

import io.converge.console.action.Action;
import io.converge.console.action.ConsoleActions.AuditRecord;
import io.converge.console.inspect.Inspector.Filter;
import io.converge.console.inspect.Inspector.Summary;
import io.converge.console.inspect.StuckItem;
import io.converge.console.inspect.StuckKind;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The bodies of the console's own pages. Every value is escaped. Stateless. */
final class Views {

  private Views() {
  }

  static String overview(ConsoleContext ctx, List<Summary> summaries) {
    StringBuilder b = new StringBuilder("<table id=\"overview\"><tr><th>kind</th><th>what</th><th>stuck</th>"
        + "<th>all</th><th>oldest</th><th>threshold</th></tr>");
    for (Summary s : summaries) {
      b.append("<tr data-kind=\"").append(s.kind().slug()).append("\"><td><a href=\"")
          .append(ctx.href("/kind/" + s.kind().slug())).append("\">").append(escape(s.kind().title()))
          .append("</a></td><td class=\"muted\">").append(escape(s.kind().description()))
          .append("</td><td class=\"num\">")
          .append(s.stuck() > 0 ? "<a class=\"badge bad\" href=\"" + ctx.href("/kind/" + s.kind().slug(), "stuck", "1")
              + "\">" + s.stuck() + "</a>" : "<span class=\"badge ok\">0</span>")
          .append("</td><td class=\"num\">").append(s.total()).append("</td><td class=\"num\">")
          .append(escape(Html.age(s.oldest()))).append("</td><td class=\"num\">")
          .append(escape(Html.age(s.threshold())))
          .append("</td></tr>");
    }
    return b.append("</table><p class=\"muted\">Stuck: waiting longer than the kind's threshold. Ages by the"
        + " database's clock.</p>").toString();
  }

  static String list(ConsoleContext ctx, StuckKind kind, Map<String, String> form, Filter filter, Duration threshold,
      List<StuckItem> items) {
    StringBuilder b = new StringBuilder("<p class=\"muted\">").append(escape(kind.description()))
        .append(". Threshold ").append(escape(Html.age(threshold))).append(".</p>");
    b.append("<form class=\"filter\" method=\"get\" action=\"").append(ctx.href("/kind/" + kind.slug())).append("\">");
    for (String field : List.of("tenant", "topic", "key", "minAge", "limit")) {
      b.append("<label>").append(field.equals("minAge") ? "min age (90s, 5m, 2h)" : field)
          .append("<input name=\"").append(field).append("\" value=\"").append(escape(form.get(field)))
          .append("\" size=\"14\"></label>");
    }
    b.append("<label>stuck only<input type=\"checkbox\" name=\"stuck\" value=\"1\"")
        .append(form.get("stuck") != null ? " checked" : "").append("></label><button>Filter</button></form>");
    b.append("<p id=\"count\">").append(items.size()).append(items.size() == filter.limit() ? "+" : "")
        .append(" item(s), oldest first</p>");
    if (items.isEmpty()) {
      return b.append("<p class=\"muted\" id=\"empty\">Nothing here.</p>").toString();
    }
    b.append("<table id=\"items\"><tr><th>age</th><th>id</th><th>key</th><th>tenant</th><th>topic</th>"
        + "<th>reason</th><th>details</th><th>actions</th></tr>");
    for (StuckItem item : items) {
      boolean stuck = item.age().compareTo(threshold) >= 0;
      b.append("<tr").append(stuck ? " class=\"stuck\"" : "").append(" data-id=\"").append(escape(item.id()))
          .append("\" data-key=\"").append(escape(item.key())).append("\"><td class=\"num\">")
          .append(escape(Html.age(item.age()))).append(stuck ? " <span class=\"badge bad\">stuck</span>" : "")
          .append("</td><td>").append(escape(item.id())).append("</td><td>").append(escape(item.key()))
          .append("</td><td>").append(escape(item.tenant())).append("</td><td>").append(escape(item.topic()))
          .append("</td><td>").append(escape(item.reason())).append("</td><td class=\"details\">");
      item.details().forEach((k, v) -> b.append(escape(k)).append(": ").append(escape(v)).append("<br>"));
      b.append("</td><td>");
      for (Action action : Action.values()) {
        String target = action.kind() == kind ? action.target(item) : null;
        if (target != null) {
          b.append("<a class=\"button").append(action == Action.DISCARD_DEAD_LETTER ? " danger" : "")
              .append("\" data-action=\"").append(action.slug()).append("\" href=\"")
              .append(ctx.href("/confirm", "action", action.slug(), "target", target)).append("\">")
              .append(escape(action.title())).append("</a> ");
        }
      }
      b.append("</td></tr>");
    }
    return b.append("</table>").toString();
  }

  static String confirm(ConsoleContext ctx, Action action, String target, StuckItem item, String token,
      String operator, boolean mayAct) {
    StringBuilder b = new StringBuilder("<p>").append(escape(action.title())).append(" <strong id=\"target\">")
        .append(escape(target)).append("</strong>: ").append(escape(action.effect())).append(".</p>");
    if (item != null) {
      b.append("<p>").append(escape(item.kind().title())).append(", waiting ").append(escape(Html.age(item.age())))
          .append(": ").append(escape(item.reason())).append("</p>");
    } else {
      b.append("<p class=\"message bad\">It is not listed any more: the action will probably not apply.</p>");
    }
    if (operator == null) {
      return b.append("<p class=\"message bad\">Who you are is not known (no principal, no operator header):"
          + " the console cannot record the decision.</p>").toString();
    }
    if (!mayAct) {
      return b.append("<p class=\"message bad\" id=\"not-allowed\"><strong>").append(escape(operator))
          .append("</strong> may read the console but not act: an action needs the console's action role.</p>")
          .toString();
    }
    return b.append("<form method=\"post\" action=\"").append(ctx.href("/act")).append("\">")
        .append("<input type=\"hidden\" name=\"action\" value=\"").append(escape(action.slug())).append("\">")
        .append("<input type=\"hidden\" name=\"target\" value=\"").append(escape(target)).append("\">")
        .append("<input type=\"hidden\" name=\"token\" value=\"").append(escape(token)).append("\">")
        .append("<p><label>Note").append(action.needsNote() ? " (required: what was done)" : " (optional)")
        .append("<br><textarea name=\"note\" rows=\"3\" cols=\"60\"></textarea></label></p>")
        .append("<p>Recorded as <strong>").append(escape(operator)).append("</strong>. ")
        .append("<button id=\"confirm\"").append(action == Action.DISCARD_DEAD_LETTER ? " class=\"danger\"" : "")
        .append(">Confirm: ").append(escape(action.title())).append("</button> <a href=\"")
        .append(ctx.href("/kind/" + action.kind().slug())).append("\">Cancel</a></p></form>").toString();
  }

  static String result(ConsoleContext ctx, Action action, String target, boolean done) {
    return "<p class=\"message " + (done ? "ok" : "bad") + "\" id=\"result\">"
        + escape(done ? action.title() + " " + target + ": recorded; " + action.effect() + "."
            : action.title() + " " + target + ": not applicable, it is no longer in that state (audited).")
        + "</p><p><a href=\"" + ctx.href("/kind/" + action.kind().slug()) + "\">Back to "
        + escape(action.kind().title()) + "</a> · <a href=\"" + ctx.href("/audit") + "\">Audit</a></p>";
  }

  static String audit(List<AuditRecord> records) {
    if (records.isEmpty()) {
      return "<p class=\"muted\" id=\"empty\">No decision recorded yet.</p>";
    }
    StringBuilder b = new StringBuilder("<table id=\"audit\"><tr><th>when</th><th>who</th><th>action</th>"
        + "<th>target</th><th>outcome</th><th>note</th></tr>");
    for (AuditRecord r : records) {
      b.append("<tr><td>").append(escape(r.at())).append("</td><td>").append(escape(r.operator())).append("</td><td>")
          .append(escape(r.action().title())).append("</td><td>").append(escape(r.target())).append("</td><td>")
          .append(r.done() ? "done" : "not applicable").append("</td><td>").append(escape(r.note()))
          .append("</td></tr>");
    }
    return b.append("</table>").toString();
  }

  static String message(String text) {
    return "<p class=\"message bad\" id=\"error\">" + escape(text) + "</p>";
  }
}
