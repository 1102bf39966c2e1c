package io.converge.ops.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback in front of one server (a broker, the database) that {@code converge chaos}
 * controls: latency and jitter on every chunk forwarded, connections dropped (FIN) or reset (RST), and a
 * blackout during which every connection is cut and new ones are closed as soon as accepted. One thread
 * accepts, two pump each connection (one per direction, so each direction keeps its byte order).
 * Thread-safe; {@link #close()} stops it and cuts every connection.
 */
public final class FaultProxy implements AutoCloseable {

  private final String name;
  private final InetSocketAddress target;
  private final ServerSocket server;
  private final Set<Socket> live = ConcurrentHashMap.newKeySet();
  private final Random random;
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong cut = new AtomicLong();
  private volatile long latencyMillis;
  private volatile long jitterMillis;
  private volatile long blackoutUntil;
  private volatile boolean closed;

  private FaultProxy(String name, InetSocketAddress target, ServerSocket server, long seed) {
    this.name = name;
    this.target = target;
    this.server = server;
    this.random = new Random(seed);
  }

  /**
   * A started proxy on a free loopback port that forwards to {@code host:port}.
   *
   * @param seed the seed of the jitter, so that a run is reproducible
   * @throws IOException when no port can be bound
   */
  public static FaultProxy start(String name, String host, int port, long seed) throws IOException {
    ServerSocket server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    FaultProxy proxy = new FaultProxy(name, new InetSocketAddress(host, port), server, seed);
    Thread acceptor = new Thread(proxy::accept, "chaos-proxy-" + name);
    acceptor.setDaemon(true);
    acceptor.start();
    return proxy;
  }

  /** The proxy's name (what it stands in front of). */
  public String name() {
    return name;
  }

  /** The port clients connect to instead of the server's. */
  public int port() {
    return server.getLocalPort();
  }

  /** {@code host:port} of the proxy, for a client's configuration. */
  public String address() {
    return server.getInetAddress().getHostAddress() + ":" + port();
  }

  /**
   * Delays every chunk forwarded, in both directions, by {@code latency} plus a uniform random part of
   * {@code jitter}; zero and zero for none.
   *
   * @throws IllegalArgumentException when either is negative
   */
  public void latency(Duration latency, Duration jitter) {
    if (latency.isNegative() || jitter.isNegative()) {
      throw new IllegalArgumentException(
          "proxy " + name + ": latency and jitter must be >= 0, but were " + latency + " and " + jitter);
    }
    this.latencyMillis = latency.toMillis();
    this.jitterMillis = jitter.toMillis();
  }

  /** Closes every live connection (FIN on both sides, as when a middlebox drops its state); returns how many. */
  public int dropConnections() {
    return cutAll(false);
  }

  /** Resets every live connection (RST on both sides); returns how many. */
  public int resetConnections() {
    return cutAll(true);
  }

  /**
   * For {@code length}: resets every live connection and closes every new one as soon as it is accepted,
   * as when the server's host is unreachable. Returns at once.
   */
  public void blackout(Duration length) {
    blackoutUntil = System.nanoTime() + length.toNanos();
    cutAll(true);
  }

  /** Whether a blackout is under way. */
  public boolean inBlackout() {
    return System.nanoTime() - blackoutUntil < 0;
  }

  /** Connections accepted and forwarded so far. */
  public long accepted() {
    return accepted.get();
  }

  /** Connections closed on accept during a blackout so far. */
  public long refused() {
    return refused.get();
  }

  /** Connections this proxy cut (dropped, reset, blacked out) so far. */
  public long cut() {
    return cut.get();
  }

  private int cutAll(boolean reset) {
    // first take every socket, then (to reset) set every one to RST, then close them: a pump thread woken by the
    // first close closes its other side too (a FIN unless already set to RST), and must not take it from the count
    List<Socket> taken = new ArrayList<>();
    for (Socket s : live) {
      if (live.remove(s)) {
        taken.add(s);
      }
    }
    for (Socket s : taken) {
      if (reset) {
        try {
          s.setSoLinger(true, 0);
        } catch (IOException e) {
          // already gone
        }
      }
    }
    taken.forEach(s -> close(s, reset));
    cut.addAndGet(taken.size() / 2);
    return taken.size() / 2;
  }

  private void accept() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (inBlackout()) {
        refused.incrementAndGet();
        close(client, true);
        continue;
      }
      Thread t = new Thread(() -> connect(client), "chaos-proxy-" + name + "-connect");
      t.setDaemon(true);
      t.start();
    }
  }

  private void connect(Socket client) {
    Socket upstream = new Socket();
    try {
      upstream.setTcpNoDelay(true);
      client.setTcpNoDelay(true);
      upstream.connect(target, 5_000);
    } catch (IOException e) {
      close(client, true);
      close(upstream, true);
      return;
    }
    accepted.incrementAndGet();
    live.add(client);
    live.add(upstream);
    Thread back = new Thread(() -> pump(upstream, client), "chaos-proxy-" + name + "-down");
    back.setDaemon(true);
    back.start();
    pump(client, upstream);
  }

  private void pump(Socket from, Socket to) {
    byte[] buf = new byte[16 * 1024];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        delay();
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException | InterruptedException e) {
      // the connection ended (cut, reset, or the peer went away): close both sides below
    } finally {
      boolean ours = live.remove(from) | live.remove(to);
      if (ours) {
        close(from, false);
        close(to, false);
      }
    }
  }

  private void delay() throws InterruptedException {
    long base = latencyMillis;
    long jitter = jitterMillis;
    long ms = base + (jitter > 0 ? nextJitter(jitter) : 0);
    if (ms > 0) {
      Thread.sleep(ms); // the injected latency itself, not a synchronisation
    }
  }

  private long nextJitter(long bound) {
    synchronized (random) {
      return (long) (random.nextDouble() * bound);
    }
  }

  private static void close(Socket s, boolean reset) {
    try {
      if (reset && !s.isClosed()) {
        s.setSoLinger(true, 0);
      }
      s.close();
    } catch (IOException e) {
      // already gone
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // already closed
    }
    cutAll(true);
  }

  @Override
  public String toString() {
    return "proxy " + name + " " + address() + " -> " + target.getHostString() + ":" + target.getPort();
  }
}
