package io.converge.ops.db;

import io.converge.console.web.Html;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import javax.sql.DataSource;
import picocli.CommandLine.Option;

/**
 * A {@link DbCommand} that lists rows, oldest first, at most {@code --limit} (1 to 10000, default 100):
 * a count line ({@code 3 dead letters (oldest 2 shown)}), then, when there are rows, a header and one
 * line per row, its columns separated by a space and the last one (the reason) by two, unpadded. A
 * listing is described in its constructor: where its rows come from, its columns, a row's values.
 *
 * @param <T> a listed row
 */
public abstract class DbListCommand<T> extends DbCommand {

  /**
   * The rows shown and how many there are.
   *
   * @param total all the rows, or -1 when unknown (the count line then says how many are shown)
   */
  public record Page<T>(long total, List<T> rows) {
  }

  /** Where a listing's rows come from: the oldest {@code limit} rows, and the total. */
  @FunctionalInterface
  public interface Rows<T> {

    Page<T> page(DataSource dataSource, int limit);
  }

  /** The most rows listed. */
  @Option(names = "--limit", defaultValue = "100", description = "most rows listed, 1 to 10000 (default ${DEFAULT-VALUE})")
  protected int limit;

  private final String noun;
  private final Rows<T> rows;
  private final List<String> formats = new ArrayList<>();
  private final List<String> headers = new ArrayList<>();
  private final BiFunction<T, Instant, Object[]> values;

  /**
   * A listing whose count line calls its rows {@code noun} ({@code dead letters}).
   *
   * @param columns each column as its printf width and its header ({@code %8s id}), separated by
   *          {@code |}; the last one is printed unpadded
   * @param values a row's values, one per column, given the time of the listing (for ages)
   */
  protected DbListCommand(String noun, Rows<T> rows, String columns,
      BiFunction<T, Instant, Object[]> values) {
    this.noun = noun;
    this.rows = rows;
    for (String column : columns.split("\\|")) {
      int space = column.indexOf(' ');
      formats.add(column.substring(0, space));
      headers.add(column.substring(space + 1));
    }
    this.values = values;
  }

  /** The rows of a store opened on the data source: {@code count} of them, the oldest {@code limit} by {@code list}. */
  protected static <S, T> Rows<T> rows(Function<DataSource, S> open, ToLongFunction<S> count,
      BiFunction<S, Integer, List<T>> list) {
    return (dataSource, limit) -> {
      S store = open.apply(dataSource);
      return new Page<>(count.applyAsLong(store), list.apply(store, limit));
    };
  }

  @Override
  protected String problem() {
    if (limit < 1 || limit > 10_000) {
      return "--limit must be between 1 and 10000, but was " + limit;
    }
    return super.problem();
  }

  @Override
  protected final int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    Page<T> page = rows.page(dataSource, limit);
    int shown = page.rows().size();
    if (page.total() < 0) {
      out.printf("%d %s shown%n", shown, noun);
    } else {
      out.printf("%d %s%s%n", page.total(), noun, page.total() > shown ? " (oldest " + shown + " shown)" : "");
    }
    Instant now = Instant.now();
    if (shown > 0) {
      print(page.rows(), out, now);
    }
    after(dataSource, out, now);
    return 0;
  }

  /** Printed after the rows: another listing that belongs with them; nothing by default. */
  protected void after(DataSource dataSource, PrintWriter out, Instant now) {
  }

  private void print(List<T> rows, PrintWriter out, Instant now) {
    StringBuilder format = new StringBuilder();
    for (int i = 0; i < formats.size(); i++) {
      format.append(i == 0 ? "" : i == formats.size() - 1 ? "  " : " ")
          .append(i == formats.size() - 1 ? "%s" : formats.get(i));
    }
    String line = format.append("%n").toString();
    out.printf(line, headers.toArray());
    for (T row : rows) {
      out.printf(line, Arrays.stream(values.apply(row, now)).map(String::valueOf).toArray());
    }
  }

  /** {@code text}, or empty when null. */
  protected static String orEmpty(String text) {
    return text == null ? "" : text;
  }

  /** The age of something that happened at {@code since}, as {@link #age(Duration)} prints it. */
  protected static String age(Instant since, Instant now) {
    return age(Duration.between(since, now));
  }

  /** As the console prints it ({@link Html#age}): {@code 3d 4h}, {@code 2h 5m}, {@code 12m 3s}, {@code 5m}. */
  public static String age(Duration d) {
    return Html.age(d);
  }

}
