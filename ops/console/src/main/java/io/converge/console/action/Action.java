package io.converge.console.action;

import io.converge.console.inspect.StuckKind;
import io.converge.console.internal.Slugs;
import io.converge.consumer.ConsumerOps;
import io.converge.outbox.Outbox;
import io.converge.producer.TxnTickets;
import io.converge.pulsar.PulsarTxns;
import io.converge.saga.SagaOperationRefusedException;
import io.converge.saga.SagaOps;
import io.converge.saga.StaleSagaException;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * What a person can decide in the console, each on one kind of item, each through the store operation the
 * {@code converge} command line uses for it: the console records the decision, the services carry it out.
 */
public enum Action {

  /**
   * {@code converge outbox resume KEY --tenant T --topic P} of the parked row's line: the relays send the
   * line's rows (the key's rows of its tenant on its topic) again, in order.
   */
  RESUME_OUTBOX_KEY(StuckKind.OUTBOX_PARKED, "Resume the parked key of message",
      "the relays send the key's rows of its tenant on its topic again, in order, from their next poll"),
  /** The running consumer of the dead letter's group runs it again through its handler ({@link ConsumerOps#redrive}). */
  REDRIVE_DEAD_LETTER(StuckKind.CONSUMER_DLQ, "Re-drive the dead letter",
      "its consumer's handler runs it again within its release interval (default 5 s), then the messages held behind it"),
  /** {@code converge dlq discard ID}: it is not processed; the messages held behind it run. */
  DISCARD_DEAD_LETTER(StuckKind.CONSUMER_DLQ, "Discard the dead letter",
      "it is never processed; the messages held behind it run, in order"),
  /** {@code converge dlq resolve ID}: closes a consumer ticket. */
  RESOLVE_TICKET(StuckKind.TICKET, "Resolve the ticket", "the ticket is closed with your note"),
  /** {@code converge txn resolve MESSAGE_ID}: closes a producer ticket, after delivering or discarding by hand. */
  RESOLVE_TXN_TICKET(StuckKind.ROCKETMQ_UNIT, "Resolve the producer ticket",
      "the ticket is closed with your note (deliver or discard the message by hand first)"),
  /** {@code converge pulsar resume ID}: the next recovery scan of its group re-publishes it. */
  RESUME_PULSAR_TXN(StuckKind.PULSAR_RECOVERY, "Resume the parked transaction",
      "the next recovery scan of its group re-publishes it"),
  /**
   * {@code converge saga retry ID} ({@link SagaOps#retry}): a running or compensating saga is due now and its current
   * command is sent again with the same command id; a saga whose compensation failed compensates that step again.
   */
  RETRY_SAGA(StuckKind.SAGA, "Retry the saga",
      "a coordinator sends its current command (or the compensation that failed) again at its next poll; a participant"
          + " that did the work answers with its stored reply"),
  /** {@code converge saga compensate ID} ({@link SagaOps#compensate}): a running saga compensates as at its deadline. */
  COMPENSATE_SAGA(StuckKind.SAGA, "Compensate the saga",
      "at its next poll a coordinator compensates the steps that were sent, last first, as at its deadline"),
  /** {@code converge saga resolve ID} ({@link SagaOps#resolve}): closes the saga's open tickets. */
  RESOLVE_SAGA_TICKETS(StuckKind.SAGA, "Resolve the saga's tickets",
      "its open tickets are closed with your note; its state does not change");

  /** The states a saga can be retried in; compensated only when running. */
  private static final Set<String> RETRIABLE = Set.of("RUNNING", "COMPENSATING", "COMPENSATION_FAILED");

  private static final Pattern TXN_ID = Pattern.compile("\\((-?\\d+),(-?\\d+)\\)");

  private final StuckKind kind;
  private final String title;
  private final String effect;

  Action(StuckKind kind, String title, String effect) {
    this.kind = kind;
    this.title = title;
    this.effect = effect;
  }

  /** The kind of item it acts on. */
  public StuckKind kind() {
    return kind;
  }

  /** A short title, the button's text. */
  public String title() {
    return title;
  }

  /** What happens once it is recorded. */
  public String effect() {
    return effect;
  }

  /** Whether the action needs a note (resolving a ticket says what was done). */
  public boolean needsNote() {
    return this == RESOLVE_TICKET || this == RESOLVE_TXN_TICKET || this == RESOLVE_SAGA_TICKETS;
  }

  /** The action's name in URLs: {@code resume-outbox-key}. */
  public String slug() {
    return Slugs.of(this);
  }

  /** The action of {@code slug}. @throws IllegalArgumentException when there is none */
  public static Action ofSlug(String slug) {
    return Slugs.parse(Action.class, slug);
  }

  /**
   * The target of the action for an item of its kind: its id (for a parked outbox row its message id, which
   * names its key's line: tenant, topic and key);
   * null when the item has none (a RocketMQ unit waiting for its check-back is no ticket: the check-back
   * resolves it).
   */
  public String target(io.converge.console.inspect.StuckItem item) {
    if (this == RESOLVE_TXN_TICKET && item.details().containsKey("END")) {
      return null;
    }
    String state = item.details().get("state");
    return switch (this) {
      case RETRY_SAGA -> RETRIABLE.contains(state) ? item.id() : null;
      case COMPENSATE_SAGA -> "RUNNING".equals(state) ? item.id() : null;
      case RESOLVE_SAGA_TICKETS -> "0".equals(item.details().getOrDefault("open tickets", "0")) ? null : item.id();
      default -> item.id();
    };
  }

  /**
   * Performs it on {@code target} through its store.
   *
   * @return false when the target is not in the state the action needs (not parked, not open)
   * @throws IllegalArgumentException when {@code target} is not a valid id for it
   */
  boolean perform(DataSource dataSource, String target, String operator, String note) {
    return switch (this) {
      case RESUME_OUTBOX_KEY -> Outbox.on(dataSource).resumeLineOf(target) > 0;
      case REDRIVE_DEAD_LETTER -> ConsumerOps.of(dataSource).redrive(number(target));
      case DISCARD_DEAD_LETTER -> ConsumerOps.of(dataSource).discard(number(target));
      case RESOLVE_TICKET -> ConsumerOps.of(dataSource).resolveTicket(number(target), operator, note);
      case RESOLVE_TXN_TICKET -> TxnTickets.on(dataSource).resolve(target, operator, note);
      case RESUME_PULSAR_TXN -> {
        Matcher m = TXN_ID.matcher(target);
        if (!m.matches()) {
          throw new IllegalArgumentException("a Pulsar transaction id is (most,least), but was " + target);
        }
        yield PulsarTxns.on(dataSource).resume(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
      }
      case RETRY_SAGA, COMPENSATE_SAGA, RESOLVE_SAGA_TICKETS -> saga(dataSource, target.trim(), operator, note);
    };
  }

  /**
   * A saga action through {@link SagaOps}: false when the saga is not in a state the action applies to, or a
   * coordinator moved it meanwhile (nothing changed; the person looks again).
   */
  private boolean saga(DataSource dataSource, String id, String operator, String note) {
    SagaOps ops = SagaOps.of(dataSource);
    try {
      switch (this) {
        case RETRY_SAGA -> ops.retry(id, operator, note);
        case COMPENSATE_SAGA -> ops.compensate(id, operator, note);
        default -> ops.resolve(id, operator, note);
      }
      return true;
    } catch (SagaOperationRefusedException | StaleSagaException e) {
      return false;
    }
  }

  private static long number(String target) {
    try {
      return Long.parseLong(target.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("the id must be a number, but was " + target, e);
    }
  }
}
