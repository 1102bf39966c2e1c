package io.converge.ops.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy's faults as a client sees them, in front of an echo server on loopback. */
class FaultProxyTest {

  private ServerSocket echo;
  private FaultProxy proxy;

  @BeforeEach
  void start() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(() -> {
      while (true) {
        try {
          Socket s = echo.accept();
          Thread e = new Thread(() -> {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
              in.transferTo(out);
            } catch (IOException ignored) {
              // the client or the proxy went away
            }
          });
          e.setDaemon(true);
          e.start();
        } catch (IOException closed) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
    proxy = FaultProxy.start("echo", "127.0.0.1", echo.getLocalPort(), 1);
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  private Socket client() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
    s.setSoTimeout(5_000);
    return s;
  }

  private static String roundTrip(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes());
    byte[] b = s.getInputStream().readNBytes(text.length());
    return new String(b);
  }

  @Test
  void forwardsBothWays() throws IOException {
    try (Socket s = client()) {
      assertThat(roundTrip(s, "hello")).isEqualTo("hello");
      assertThat(roundTrip(s, "again")).isEqualTo("again");
    }
    assertThat(proxy.accepted()).isEqualTo(1);
  }

  @Test
  void latencyDelaysEachDirection() throws IOException {
    proxy.latency(Duration.ofMillis(150), Duration.ofMillis(50));
    try (Socket s = client()) {
      long t0 = System.nanoTime();
      assertThat(roundTrip(s, "slow")).isEqualTo("slow");
      // a lower bound only: the chunk waits 150-200 ms on its way in and again on its way back
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }
    assertThatThrownBy(() -> proxy.latency(Duration.ofMillis(-1), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("but were");
  }

  @Test
  void resetCutsWithRst() throws IOException {
    try (Socket s = client()) {
      assertThat(roundTrip(s, "x")).isEqualTo("x");
      assertThat(proxy.resetConnections()).isEqualTo(1);
      assertThatThrownBy(() -> {
        s.getOutputStream().write("y".getBytes());
        s.getInputStream().read();
        s.getOutputStream().write("z".getBytes());
        s.getInputStream().read();
      }).isInstanceOf(SocketException.class);
    }
    assertThat(proxy.cut()).isEqualTo(1);
  }

  @Test
  void dropClosesWithFin() throws IOException {
    try (Socket s = client()) {
      assertThat(roundTrip(s, "x")).isEqualTo("x");
      assertThat(proxy.dropConnections()).isEqualTo(1);
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
  }

  @Test
  void blackoutRefusesUntilItEnds() throws IOException {
    Socket before = client();
    assertThat(roundTrip(before, "x")).isEqualTo("x");
    proxy.blackout(Duration.ofMillis(800));
    assertThat(proxy.inBlackout()).isTrue();
    assertThatThrownBy(() -> before.getInputStream().read()).isInstanceOf(SocketException.class);
    before.close();
    try (Socket during = client()) {
      assertThatThrownBy(() -> {
        if (during.getInputStream().read() < 0) {
          throw new SocketException("closed");
        }
      }).isInstanceOf(SocketException.class);
    }
    assertThat(proxy.refused()).isGreaterThanOrEqualTo(1);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> !proxy.inBlackout());
    try (Socket after = client()) {
      assertThat(roundTrip(after, "back")).isEqualTo("back");
    }
  }
}
