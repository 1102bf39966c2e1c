package io.converge.console.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The console's builders validate in build(): a bad value fails naming the setting and quoting the value. */
class ConsoleBuildersTest {

  /** A console on a data source that is never connected to (no migration, no discovered pages). */
  private static Console.Builder offline() {
    return Console.builder().dataSource(new PGSimpleDataSource()).migrate(false).discoverPages(false);
  }

  @Test
  void aBasePathIsEmptyOrSlashSeparatedSegments() {
    assertThatThrownBy(() -> offline().basePath("converge/console").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("console.basePath must be empty or /segment[/segment...], but was converge/console");
    assertThatThrownBy(() -> offline().basePath("/con sole").build())
        .hasMessage("console.basePath must be empty or /segment[/segment...], but was /con sole");
    assertThat(offline().basePath("/converge/console/").build()).isNotNull();
    assertThat(offline().basePath("/").build()).as("the root: no base path").isNotNull();
  }

  @Test
  void theServletsHeadersAreHeaderNames() {
    Console console = offline().build();
    assertThatThrownBy(() -> ConsoleServlet.builder(console).operatorHeader("X Operator").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("console.operatorHeader must be a header name, but was X Operator");
    assertThatThrownBy(() -> ConsoleServlet.builder(console).roleHeader("X-Roles:").build())
        .hasMessage("console.roleHeader must be a header name, but was X-Roles:");
    assertThatThrownBy(() -> ConsoleServlet.builder(console).actionRole(" ").build())
        .hasMessage("console.actionRole must not be blank, but was ' '");
    assertThat(ConsoleServlet.builder(console).operatorHeader("X-Forwarded-User").roleHeader("X-Roles").build())
        .isNotNull();
  }
}
