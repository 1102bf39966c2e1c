package io.converge.ops.bench;

import io.converge.broker.internal.Closeables;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * What a scenario's {@link Scenario#setUp} opened (clients, consumers, executors), closed by its
 * {@link Scenario#close()} last first, each even when an earlier one failed. Closing again closes nothing more, so a
 * scenario set up again starts empty. Not thread-safe: set-up and close run on the runner's thread.
 */
public final class Teardown implements AutoCloseable {

  /** How a resource is closed, e.g. {@code DefaultMQProducer::shutdown}. */
  @FunctionalInterface
  public interface Closer<T> {

    /** Closes {@code resource}. */
    void close(T resource) throws Exception;
  }

  private final Deque<AutoCloseable> open = new ArrayDeque<>();

  /** Registers {@code resource}, to be closed with {@code closer}; returns it. */
  public <T> T add(T resource, Closer<? super T> closer) {
    open.push(() -> closer.close(resource));
    return resource;
  }

  /** Registers {@code resource}, to be closed with its {@code close()}; returns it. */
  public <T extends AutoCloseable> T add(T resource) {
    return add(resource, AutoCloseable::close);
  }

  /** Closes what was registered, last first; throws the first failure, the later ones suppressed in it. */
  @Override
  public void close() throws Exception {
    List<AutoCloseable> lastFirst = new ArrayList<>(open);
    open.clear();
    Closeables.closeAll(lastFirst);
  }
}
