package io.converge.broker.child;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * The child JVMs of one test, given as a test-method parameter by {@link ChildJvmExtension}: it
 * launches them, and the extension kills those still running after the test and adds their output to
 * a failure. Thread-safe.
 */
public final class ChildJvms {

  private final Path dir;
  private final List<ChildJvm> started = new CopyOnWriteArrayList<>();

  ChildJvms(Path dir) {
    this.dir = dir;
  }

  /** A child running {@code main} with the test's classpath; configure it, then {@link ChildJvm.Builder#start()}. */
  public ChildJvm.Builder launch(Class<?> main) {
    return new ChildJvm.Builder(main, dir, started::add);
  }

  /** The children started so far. */
  List<ChildJvm> started() {
    return List.copyOf(started);
  }

  /** Kills every child still running and deletes their logs. */
  void closeAll() {
    started.forEach(ChildJvm::close);
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a log left in the temporary directory is harmless
    }
  }
}
