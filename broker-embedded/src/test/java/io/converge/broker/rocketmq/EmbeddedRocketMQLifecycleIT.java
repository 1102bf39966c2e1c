package io.converge.broker.rocketmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.converge.broker.EmbeddedServerException;
import io.converge.broker.UnwritableDir;
import io.converge.broker.child.ChildJvm;
import io.converge.broker.child.ChildJvmExtension;
import io.converge.broker.child.ChildJvms;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Its own broker (not the shared one): restart on the same store, clean stop, clear errors. */
@ExtendWith(ChildJvmExtension.class)
class EmbeddedRocketMQLifecycleIT {

  /**
   * In a child JVM, so that no other broker of the test JVM muddles the threads: a message survives a
   * broker restart on the same store, and after {@code stop()} the JVM exits by itself.
   */
  @Test
  void brokerRestartKeepsCommittedMessagesAndStopLetsTheJvmExit(ChildJvms jvms) throws Exception {
    ChildJvm child = jvms.launch(RestartAndExitMain.class).heap("512m").start();
    boolean exited = child.process().waitFor(150, TimeUnit.SECONDS);
    String output = child.output();
    assertThat(exited).as("the JVM exits by itself after stop(); output:%n%s", output).isTrue();
    assertThat(child.process().exitValue()).as(output).isZero();
    assertThat(output).contains("METRICS-FLUSH WAITING").contains("RECEIVED kept").contains("STOPPED");
  }

  @Test
  void portInUseIsNamed() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      EmbeddedRocketMQ mq = EmbeddedRocketMQ.builder().nameServerPort(taken.getLocalPort()).build();
      assertThatThrownBy(mq::start)
          .isInstanceOf(EmbeddedServerException.class)
          .hasMessageContaining("port " + taken.getLocalPort())
          .hasMessageContaining("name server");
    }
  }

  @Test
  void unwritableStoreDirIsNamed(@TempDir Path tmp) throws Exception {
    Path store = UnwritableDir.below(tmp, "store");
    UnwritableDir.assertStartNames(EmbeddedRocketMQ.builder().storeDir(store).build()::start, store);
  }

}
