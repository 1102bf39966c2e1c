package io.converge.broker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Loopback ports for embedded servers. Thread-safe; stateless. */
public final class Ports {

  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  private Ports() {
  }

  /** A port that is free on 127.0.0.1 now (it may be taken by the time it is used: bind promptly). */
  public static int free() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(LOOPBACK, 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new EmbeddedServerException("No free port on " + LOOPBACK.getHostAddress(), e);
    }
  }

  /** A port {@code p} such that {@code p} and {@code p - offset} are both free on 127.0.0.1 now. */
  public static int freeWithCompanion(int offset) {
    for (int attempt = 0; attempt < 50; attempt++) {
      int port = free();
      if (port - offset > 1024 && isFree(port - offset)) {
        return port;
      }
    }
    throw new EmbeddedServerException("No pair of free ports (p, p-" + offset + ") on 127.0.0.1");
  }

  /** Fails with a message naming {@code what} and the port when {@code port} is taken on 127.0.0.1. */
  public static void requireFree(int port, String what) {
    if (!isFree(port)) {
      throw new EmbeddedServerException(what + ": port " + port + " on 127.0.0.1 is already in use");
    }
  }

  /** Whether {@code port} can be bound on 127.0.0.1 now. */
  public static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      // as the servers bind: a listener makes the port taken, connections in TIME_WAIT do not
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(LOOPBACK, port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
