package io.converge.console.web;

import io.converge.console.inspect.StuckKind;
import java.util.List;

/** The frame of every page: head, inline styles, the navigation bar. Stateless. */
final class Layout {

  private static final String CSS = """
      body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
      header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;flex-wrap:wrap;gap:4px 14px}
      header a{color:#cfd8e8;text-decoration:none;white-space:nowrap}
      header a.here{color:#fff;font-weight:600}
      header strong{margin-right:10px;white-space:nowrap}
      main{padding:16px 20px}
      h1{font-size:20px;margin:4px 0 12px}
      table{border-collapse:collapse;background:#fff;width:100%}
      th,td{border-bottom:1px solid #e2e5ea;padding:6px 8px;text-align:left;vertical-align:top}
      th{background:#eef0f4;font-weight:600}
      td.num{text-align:right;font-variant-numeric:tabular-nums}
      tr.stuck td:first-child{border-left:4px solid #c62828}
      .badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px}
      .bad{background:#fde2e1;color:#a31515}
      .ok{background:#e3f4e4;color:#1e6b26}
      .muted{color:#6b7280}
      .details{font-size:12px;color:#4b5563}
      form.filter{margin:0 0 12px;display:flex;gap:8px;flex-wrap:wrap;align-items:end}
      form.filter label{display:flex;flex-direction:column;font-size:12px}
      input,textarea{font:inherit;padding:3px 6px}
      .button,button{background:#1f5fbf;color:#fff;border:0;border-radius:4px;padding:4px 10px;font:inherit;
        text-decoration:none;cursor:pointer;display:inline-block;margin:1px 0}
      .button.danger,button.danger{background:#b3261e}
      .message{padding:10px;border-radius:4px;margin:0 0 12px}
      .message.ok{border:1px solid #9ccf9f}
      .message.bad{border:1px solid #e5a3a0}
      """;

  private Layout() {
  }

  /** The whole page: {@code body} under the navigation, {@code here} marking the current link. */
  static String page(ConsoleContext ctx, String title, String here, List<ConsolePage> pages, String body) {
    StringBuilder nav = new StringBuilder();
    nav.append("<strong>Converge console</strong>");
    link(nav, ctx.href("/"), "Overview", "/".equals(here));
    for (StuckKind kind : StuckKind.values()) {
      link(nav, ctx.href("/kind/" + kind.slug()), kind.title(), ("/kind/" + kind.slug()).equals(here));
    }
    for (ConsolePage page : pages) {
      link(nav, ctx.href(page.path()), page.title(), page.path().equals(here));
    }
    link(nav, ctx.href("/audit"), "Audit", "/audit".equals(here));
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        + "<title>" + Html.escape(title) + " · Converge console</title><style>" + CSS + "</style></head>"
        + "<body><header>" + nav + "</header><main><h1>" + Html.escape(title) + "</h1>" + body
        + "</main></body></html>\n";
  }

  private static void link(StringBuilder nav, String href, String text, boolean here) {
    nav.append("<a href=\"").append(href).append('"').append(here ? " class=\"here\"" : "").append('>')
        .append(Html.escape(text)).append("</a>");
  }
}
