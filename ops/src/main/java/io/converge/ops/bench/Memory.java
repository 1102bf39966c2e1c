package io.converge.ops.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The bench JVM's memory after a scenario ran: its resident set (the whole process, the embedded
 * RocketMQ broker included; PostgreSQL and Pulsar run in processes of their own) and its heap in use
 * after a full GC. Immutable.
 *
 * @param rssBytes resident set size; -1 where {@code /proc/self/status} is not readable (not Linux)
 * @param heapBytes heap in use after {@code System.gc()}
 */
public record Memory(long rssBytes, long heapBytes) {

  /** Samples the current process (runs a full GC first). */
  public static Memory sample() {
    System.gc();
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    return new Memory(rss(), heap);
  }

  private static long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: no RSS figure
    }
    return -1;
  }

  /** The report's figures: {@code RSS 300 MiB, heap after GC 40 MiB}. */
  public String describe() {
    return "RSS " + mib(rssBytes) + ", heap after GC " + mib(heapBytes);
  }

  /** {@code bytes} in MiB, or "-" for an unknown figure. */
  public static String mib(long bytes) {
    return bytes < 0 ? "-" : (bytes >> 20) + " MiB";
  }
}
