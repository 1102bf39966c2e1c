import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Assembles the converge distribution (run by ops/pom.xml in the package phase, as a single-file Java program):
 * bin/ (the launcher), lib/ (ops/cli's jar and runtime classpath: the production commands, exactly) and lib/dev/
 * (the ops jar and the jars of its runtime classpath that are not in lib/: what only dev and bench need).
 *
 * <p>Arguments: DIST BIN_DIR CLI_JAR CLI_CLASSPATH_FILE OPS_JAR OPS_CLASSPATH_FILE (the classpath files written by
 * dependency:build-classpath).
 */
public class Distribution {

  public static void main(String[] args) throws IOException {
    Path dist = Path.of(args[0]);
    Path bin = Path.of(args[1]);
    List<Path> production = jars(Path.of(args[2]), Path.of(args[3]));
    List<Path> dev = jars(Path.of(args[4]), Path.of(args[5]));
    if (Files.exists(dist)) {
      try (Stream<Path> old = Files.walk(dist)) {
        for (Path p : old.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    Path distBin = Files.createDirectories(dist.resolve("bin"));
    try (Stream<Path> launchers = Files.list(bin)) {
      for (Path launcher : launchers.toList()) {
        copy(launcher, distBin).toFile().setExecutable(true, false);
      }
    }
    Path lib = Files.createDirectories(dist.resolve("lib"));
    Path libDev = Files.createDirectories(lib.resolve("dev"));
    for (Path jar : production) {
      copy(jar, lib);
    }
    int devJars = 0;
    for (Path jar : dev) {
      if (!Files.exists(lib.resolve(jar.getFileName()))) {
        copy(jar, libDev);
        devJars++;
      }
    }
    System.out.println("converge distribution: " + dist + " (bin/converge; lib/: " + production.size()
        + " jars; lib/dev/: " + devJars + " jars)");
  }

  /** {@code jar} and the entries of {@code classpathFile}, each a jar file. */
  private static List<Path> jars(Path jar, Path classpathFile) throws IOException {
    List<Path> jars = new ArrayList<>();
    jars.add(jar);
    for (String entry : Files.readString(classpathFile).trim().split(File.pathSeparator)) {
      if (!entry.isBlank()) {
        jars.add(Path.of(entry));
      }
    }
    for (Path p : jars) {
      if (!Files.isRegularFile(p) || !p.getFileName().toString().endsWith(".jar")) {
        throw new IllegalStateException("not a jar: " + p + " (the distribution is assembled in the package phase)");
      }
    }
    return jars;
  }

  private static Path copy(Path file, Path dir) throws IOException {
    return Files.copy(file, dir.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
  }
}
