package io.converge.console.web;

import io.converge.console.inspect.Inspector;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * What a {@link ConsolePage} may use: the database, the inspector, and links within the console. Immutable.
 *
 * @param dataSource the database holding Converge's tables
 * @param inspector the inspector on it
 * @param basePath the console's root as the browser sees it ({@code ""} or {@code /converge/console})
 */
public record ConsoleContext(DataSource dataSource, Inspector inspector, String basePath) {

  /** Checks. */
  public ConsoleContext {
    Objects.requireNonNull(dataSource, "dataSource");
    Objects.requireNonNull(inspector, "inspector");
    basePath = basePath == null ? "" : basePath;
  }

  /**
   * The escaped href of {@code path} within the console with the query {@code params} (name, value pairs;
   * null values left out), ready for an attribute.
   */
  public String href(String path, String... params) {
    StringBuilder url = new StringBuilder(basePath).append(path);
    char sep = '?';
    for (int i = 0; i + 1 < params.length; i += 2) {
      if (params[i + 1] != null) {
        url.append(sep).append(Html.url(params[i])).append('=').append(Html.url(params[i + 1]));
        sep = '&';
      }
    }
    return Html.escape(url.toString());
  }
}
