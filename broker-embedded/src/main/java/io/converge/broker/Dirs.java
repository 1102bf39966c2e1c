package io.converge.broker;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Directories of embedded servers: created, checked for writing, deleted. Stateless. */
public final class Dirs {

  private Dirs() {
  }

  /** A new temporary directory named after {@code prefix}. */
  public static Path temp(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new EmbeddedServerException("Cannot create a temporary directory for " + prefix
          + " under " + System.getProperty("java.io.tmpdir"), e);
    }
  }

  /**
   * Creates {@code dir} if needed and proves it writable by writing a file in it.
   *
   * @throws EmbeddedServerException naming {@code what} and the directory when it is not writable
   */
  public static Path requireWritable(Path dir, String what) {
    try {
      Files.createDirectories(dir);
      Path probe = Files.createTempFile(dir, ".probe", null);
      Files.delete(probe);
      return dir;
    } catch (IOException | SecurityException e) {
      throw new EmbeddedServerException(
          what + ": directory " + dir.toAbsolutePath() + " is not writable (" + e + ")", e);
    }
  }

  /** Deletes {@code dir} and everything below it; a missing directory is fine. Best effort. */
  public static void deleteQuietly(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
          Files.deleteIfExists(d);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      // a leftover temp dir is harmless; the caller has nothing better to do with this
    }
  }
}
