package io.converge.ops.doctor;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * The rules for a RocketMQ broker's transaction settings against the producer's (pure: a broker's configuration as
 * its admin API returns it in, findings out). Stateless.
 */
final class RocketMQRules {

  private RocketMQRules() {
  }

  /**
   * The producer-side settings the broker's must agree with.
   *
   * @param localTransactionTimeout the producers' {@code local-transaction-timeout}
   * @param brokerCheckWindow the producers' {@code broker-check-window}
   * @param logRetention the producers' {@code log-retention}
   */
  record Producer(Duration localTransactionTimeout, Duration brokerCheckWindow, Duration logRetention) {
  }

  /** Checks the transaction settings of broker {@code broker} (its configuration {@code config}). */
  static void check(String broker, Properties config, Producer producer, Consumer<Finding> out) {
    String check = "rocketmq." + broker + ".transactions";
    Long timeout = number(config, "transactionTimeOut");
    Long interval = number(config, "transactionCheckInterval");
    Long max = number(config, "transactionCheckMax");
    if (timeout == null || interval == null || max == null) {
      out.accept(Finding.fail(check, "the broker did not report transactionTimeOut, transactionCheckInterval and "
          + "transactionCheckMax", "use a RocketMQ 4.x/5.x broker; its admin API answers getBrokerConfig"));
      return;
    }
    Duration window = Duration.ofMillis(interval * max);
    String settings = "transactionTimeOut " + human(Duration.ofMillis(timeout)) + ", transactionCheckMax " + max
        + " × transactionCheckInterval " + human(Duration.ofMillis(interval)) + " = check window " + human(window);
    Duration local = producer.localTransactionTimeout();
    if (window.compareTo(local) <= 0) {
      out.accept(Finding.fail(check, settings + ", not longer than the producers' local-transaction-timeout "
          + human(local) + ": the broker discards a half message before its unit of work can have ended, so a commit "
          + "whose END is lost is never delivered",
          "raise transactionCheckMax or transactionCheckInterval in "
              + "broker.conf until max × interval is at least twice " + human(local)
              + " (defaults 15 × 30 s = 7.5 min)"));
    } else if (window.compareTo(local.multipliedBy(2)) < 0) {
      out.accept(Finding.warn(check, settings + ", less than twice the producers' local-transaction-timeout "
          + human(local) + ": a unit near its timeout leaves few check-backs after it ends",
          "raise "
              + "transactionCheckMax or transactionCheckInterval until max × interval is at least "
              + human(local.multipliedBy(2))));
    } else {
      out.accept(Finding.pass(check, settings + " > 2 × local-transaction-timeout " + human(local)));
    }
    String windowCheck = "rocketmq." + broker + ".check-window";
    if (window.compareTo(producer.brokerCheckWindow()) > 0) {
      if (producer.logRetention().compareTo(window.multipliedBy(2)) < 0) {
        out.accept(Finding.fail(windowCheck, "check window " + human(window) + " is longer than the producers' "
            + "broker-check-window " + human(producer.brokerCheckWindow()) + " and log-retention "
            + human(producer.logRetention()) + " is less than twice it: a check-back can find its log row purged",
            "set the producers' broker-check-window to " + human(window) + " and log-retention to at least "
                + human(window.multipliedBy(2))));
      } else {
        out.accept(Finding.warn(windowCheck, "check window " + human(window) + " is longer than the producers' "
            + "broker-check-window " + human(producer.brokerCheckWindow()) + " (log-retention "
            + human(producer.logRetention()) + " still covers it)",
            "set the producers' broker-check-window to "
                + human(window) + " so their log-retention is validated against the real window"));
      }
    } else {
      out.accept(
          Finding.pass(windowCheck, "check window " + human(window) + " within the producers' broker-check-window "
              + human(producer.brokerCheckWindow()) + ", log-retention " + human(producer.logRetention())));
    }
    Long reservedHours = number(config, "fileReservedTime");
    if (reservedHours != null && Duration.ofHours(reservedHours).compareTo(window.multipliedBy(2)) < 0) {
      out.accept(Finding.fail("rocketmq." + broker + ".file-reserved-time", "fileReservedTime " + reservedHours
          + " h keeps the half messages' commit log less than twice the check window " + human(window),
          "raise fileReservedTime in broker.conf (default 72 h)"));
    } else if (reservedHours != null) {
      out.accept(Finding.pass("rocketmq." + broker + ".file-reserved-time", "fileReservedTime " + reservedHours
          + " h > 2 × check window"));
    }
  }

  /** Checks topic {@code topic}'s route: {@code writeQueues} per broker group that holds it, of {@code groups}. */
  static void topic(String topic, List<Integer> writeQueues, int groups, int minQueues, Consumer<Finding> out) {
    String check = "rocketmq.topic." + topic;
    int total = writeQueues.stream().mapToInt(Integer::intValue).sum();
    String found = "topic " + topic + ": " + total + " write queues on " + writeQueues.size() + " of " + groups
        + " broker groups";
    if (total == 0) {
      out.accept(Finding.fail(check, found, "create it writable on every broker group: mqadmin updateTopic -n NAMESRV "
          + "-c CLUSTER -t " + topic + " -r " + minQueues + " -w " + minQueues));
    } else if (total < minQueues) {
      out.accept(Finding.warn(check, found + ", fewer than --min-queues " + minQueues,
          "mqadmin updateTopic -n NAMESRV -c CLUSTER -t " + topic + " -r " + minQueues + " -w " + minQueues));
    } else if (writeQueues.size() < groups) {
      out.accept(Finding.warn(check, found + ": while its group is down, sends to it fail instead of failing over",
          "create it on every broker group: mqadmin updateTopic -n NAMESRV -c CLUSTER -t " + topic));
    } else {
      out.accept(Finding.pass(check, found));
    }
  }

  private static Long number(Properties config, String key) {
    String v = config.getProperty(key);
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code d} as {@code 7.5 min}, {@code 30 s}, {@code 500 ms}, {@code 7 d}, {@code 3 h}. */
  static String human(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + " ms";
    }
    if (ms < 120_000) {
      return trim(ms / 1000.0) + " s";
    }
    if (ms < 7_200_000) {
      return trim(ms / 60_000.0) + " min";
    }
    if (ms < 172_800_000) {
      return trim(ms / 3_600_000.0) + " h";
    }
    return trim(ms / 86_400_000.0) + " d";
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : String.format(java.util.Locale.ROOT, "%.1f", v);
  }
}
