package io.converge.ops.bench;

/**
 * One benchmark scenario: a unit of work that {@link BenchRunner} repeats on several threads. A
 * scenario is set up once per run (topics, tables, clients) and torn down after it.
 *
 * <p>Implementations must be thread-safe in {@link #runOnce(int)}.
 */
public interface Scenario extends AutoCloseable {

  /** The name used on the command line, e.g. {@code rocketmq-send}. */
  String name();

  /** What one operation is, for the report (e.g. "message", "unit of work"). */
  default String unit() {
    return "op";
  }

  /**
   * The latencies this scenario records per operation, reported as p50/p99 next to its throughput; null
   * (the default) when it records none.
   */
  default Latencies latencies() {
    return null;
  }

  /**
   * A published figure of a comparable system to read this scenario's throughput against, quoted under
   * the report's table; null (the default) when there is none.
   */
  default String reference() {
    return null;
  }

  /** Prepares the scenario for {@code threads} worker threads (clients, topics, tables). */
  void setUp(BenchEnv env, int threads) throws Exception;

  /**
   * Performs one operation on worker thread {@code worker} (0-based).
   *
   * @return the number of operations done (usually 1; a batch may count more)
   */
  int runOnce(int worker) throws Exception;

  /** Releases what {@link #setUp} created. */
  @Override
  void close() throws Exception;
}
