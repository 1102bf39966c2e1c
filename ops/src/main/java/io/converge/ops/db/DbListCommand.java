package io.converge.ops.db;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import picocli.CommandLine.Option;

/**
 * A {@link DbCommand} that lists rows, oldest first, at most {@code --limit} (1 to 10000, default 100):
 * a count line ({@code 3 dead letters (oldest 2 shown)}), then, when there are rows, a header and one
 * line per row, its columns separated by a space and the last one (the reason) by two, unpadded.
 *
 * @param <T> a listed row
 */
public abstract class DbListCommand<T> extends DbCommand {

  /** One column: its header, its printf width ({@code %8s}, {@code %-24s}) and its value in a row. */
  public record Column<T>(String header, String format, Function<T, Object> value) {
  }

  /**
   * The rows shown and how many there are.
   *
   * @param total all the rows, or -1 when unknown (the count line then says how many are shown)
   */
  public record Page<T>(long total, List<T> rows) {
  }

  /** The most rows listed. */
  @Option(names = "--limit", defaultValue = "100", description = "most rows listed, 1 to 10000 (default ${DEFAULT-VALUE})")
  protected int limit;

  private final String noun;

  /** A listing called {@code name} in messages whose count line calls its rows {@code noun} ({@code dead letters}). */
  protected DbListCommand(String name, String noun) {
    super(name);
    this.noun = noun;
  }

  /** The columns, the last one unpadded. */
  protected abstract List<Column<T>> columns();

  /** The oldest {@code limit} rows, and the total. */
  protected abstract Page<T> page(DataSource dataSource, int limit);

  @Override
  protected String problem() {
    if (limit < 1 || limit > 10_000) {
      return "--limit must be between 1 and 10000, but was " + limit;
    }
    return super.problem();
  }

  @Override
  protected final int run(DataSource dataSource, PrintWriter out, PrintWriter err) {
    Page<T> page = page(dataSource, limit);
    int shown = page.rows().size();
    if (page.total() < 0) {
      out.printf("%d %s shown%n", shown, noun);
    } else {
      out.printf("%d %s%s%n", page.total(), noun, page.total() > shown ? " (oldest " + shown + " shown)" : "");
    }
    if (shown == 0) {
      return 0;
    }
    List<Column<T>> columns = columns();
    StringBuilder format = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      format.append(i == 0 ? "" : i == columns.size() - 1 ? "  " : " ")
          .append(i == columns.size() - 1 ? "%s" : columns.get(i).format());
    }
    String line = format.append("%n").toString();
    out.printf(line, columns.stream().map(Column::header).toArray());
    for (T row : page.rows()) {
      out.printf(line, columns.stream().map(c -> String.valueOf(c.value().apply(row))).toArray());
    }
    return 0;
  }

  /** {@code text}, or empty when null. */
  protected static String orEmpty(String text) {
    return text == null ? "" : text;
  }

  /** The age of something that happened at {@code since}, as {@link #age(Duration)} prints it. */
  protected static String age(Instant since, Instant now) {
    return age(Duration.between(since, now));
  }

  /** {@code 3d 4h}, {@code 2h 5m}, {@code 12m 3s}, {@code 40s}; a negative age is {@code 0s}. */
  public static String age(Duration d) {
    if (d.isNegative()) {
      d = Duration.ZERO;
    }
    if (d.toDays() > 0) {
      return d.toDays() + "d " + d.toHoursPart() + "h";
    }
    if (d.toHours() > 0) {
      return d.toHours() + "h " + d.toMinutesPart() + "m";
    }
    if (d.toMinutes() > 0) {
      return d.toMinutes() + "m " + d.toSecondsPart() + "s";
    }
    return d.toSeconds() + "s";
  }
}
