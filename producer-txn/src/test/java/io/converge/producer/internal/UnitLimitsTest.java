package io.converge.producer.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.core.tracing.Tracing;
import io.converge.producer.OutgoingMessage;
import io.converge.producer.UnitTooLargeException;
import io.converge.producer.internal.RecordingUnits.Recording;
import java.time.Clock;
import org.junit.jupiter.api.Test;

/**
 * {@code maxUnitMessages} and {@code maxUnitBytes}: every backend keeps a unit's messages until it ends, so a unit
 * that would go over fails with a typed error naming the message before anything of that message reaches the
 * backend; the messages a rolled-back savepoint discarded no longer count.
 */
class UnitLimitsTest {

  private static OutgoingMessage message(int bytes) {
    return OutgoingMessage.builder("order-created").payload(new byte[bytes]).build();
  }

  private static UnitContext unit(long maxUnitBytes, int maxUnitMessages, Recording backend) {
    return RecordingUnits.unit(RecordingUnits.settings(Clock.systemUTC(), Tracing.none(), null, 100, maxUnitBytes,
        maxUnitMessages), backend);
  }

  @Test
  void thePublishOverTheMessageLimitIsRefusedAndNotHandedToTheBackend() {
    Recording backend = new Recording();
    UnitContext unit = unit(1_000, 3, backend);
    for (int i = 0; i < 3; i++) {
      unit.publish(message(1));
    }
    OutgoingMessage fourth = message(1);
    assertThatThrownBy(() -> unit.publish(fourth)).isInstanceOf(UnitTooLargeException.class)
        .hasMessageContaining("Message " + fourth.id() + " would be message 4 of its unit of work, over the limit of 3"
            + " (producer.maxUnitMessages)")
        .satisfies(e -> assertThat(((UnitTooLargeException) e).messageId()).isEqualTo(fourth.id()));
    assertThat(backend.published).hasSize(3).doesNotContain(fourth);
    assertThat(unit.published()).isEqualTo(3);
  }

  @Test
  void thePublishOverTheByteLimitIsRefusedAndASavepointRollbackGivesItsBytesBack() {
    Recording backend = new Recording();
    UnitContext unit = unit(250, 100, backend);
    unit.publish(message(100));
    unit.publish(message(100));
    OutgoingMessage over = message(51);
    assertThatThrownBy(() -> unit.publish(over)).isInstanceOf(UnitTooLargeException.class)
        .hasMessageContaining("would take its unit of work to 251 payload bytes, over the limit of 250");
    unit.publish(message(50)); // exactly at the limit
    assertThat(backend.published).hasSize(3);

    unit.rollbackTo(1); // the second and the third are discarded with the savepoint: 100 bytes in the unit
    unit.publish(message(100));
    unit.publish(message(50));
    assertThat(unit.published()).isEqualTo(3);
    assertThatThrownBy(() -> unit.publish(message(1))).isInstanceOf(UnitTooLargeException.class);
  }

  @Test
  void aUnitOfManyMessagesGrowsItsAccountingPastItsFirstArray() {
    Recording backend = new Recording();
    UnitContext unit = unit(1_000_000, 1_000, backend);
    for (int i = 0; i < 1_000; i++) {
      unit.publish(message(10));
    }
    unit.rollbackTo(10);
    for (int i = 0; i < 990; i++) {
      unit.publish(message(10));
    }
    assertThatThrownBy(() -> unit.publish(message(0))).isInstanceOf(UnitTooLargeException.class);
    assertThat(backend.published).hasSize(1_000);
  }
}
