package io.converge.ops.dist;

import io.converge.ops.CliSchema;
import static org.assertj.core.api.Assertions.assertThat;

import io.converge.ops.ConvergeCli;
import io.converge.ops.dist.Dist.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import picocli.CommandLine;

/**
 * Every shell command in a fenced {@code bash} block of the project's Markdown files works as written on a fresh
 * clone: each has one of the known forms (below), the {@code converge} ones run from the built distribution
 * against a real PostgreSQL (placeholders such as {@code KEY} or {@code ID} filled in, the database options
 * pointed at the test's schema), and the {@code mvn} ones build with {@code -am} (nothing is installed) and name
 * a main class, module and command line that exist. A README line of a new form fails here until its form is
 * added, after checking it on a fresh clone.
 */
class ReadmeCommandsIT {

  /** The placeholders of the READMEs' converge lines and what stands in for them. */
  private static final Map<String, String> PLACEHOLDERS = Map.of("KEY", "readme-key", "ID", "1", "MESSAGE_ID",
      "readme-message", "NAME", "readme", "TEXT", "readme note", "(most,least)", "(1,2)", "TENANT", "readme-tenant",
      "TOPIC", "readme-topic");

  /** The converge commands that work on the database (run for real); the others (dev, bench) start servers. */
  private static final Set<String> DB_COMMANDS = Set.of("purge", "outbox", "dlq", "txn", "pulsar", "trace");

  private static final Pattern DEMO_ARG = Pattern.compile(
      "\\d+|(rocketmq|outbox|pulsar)(,(rocketmq|outbox|pulsar))*|--(freeze-db|stop-broker)=\\d+(ms|s|m)");

  private final Path root = Dist.root();
  private final Path dist = Dist.home();
  private final List<String> problems = new CopyOnWriteArrayList<>();
  /** The distribution's runs, two at a time (a JVM start each). */
  private final ExecutorService runs = Executors.newFixedThreadPool(2);
  private final List<Future<?>> started = new ArrayList<>();
  private CliSchema db;

  @Test
  void everyDocumentedCommandHasAKnownFormAndRuns() throws Exception {
    Map<String, List<String>> commands = commands();
    assertThat(commands.values()).as("the commands found").anyMatch(c -> c.get(0).equals("converge"))
        .anyMatch(c -> c.contains("examples")).anyMatch(c -> c.contains("ops"));
    db = CliSchema.create("readmecli", Dist.MIGRATIONS);
    int converge = 0;
    for (Map.Entry<String, List<String>> c : commands.entrySet()) {
      String where = c.getKey();
      List<String> words = c.getValue();
      if (words.get(0).equals("mvn")) {
        checkMaven(where, words);
      } else if (words.get(0).equals("converge") || words.get(0).equals("ops/target/converge/bin/converge")) {
        runConverge(where, words.subList(1, words.size()));
        converge++;
      } else if (!checkedElsewhere(where, words)) {
        problems.add(where + ": not a known form (mvn ..., converge ..., ops/target/converge/bin/converge ...)");
      }
    }
    for (Future<?> run : started) {
      run.get();
    }
    runs.shutdown();
    assertThat(problems).as("README command lines that do not work as written").isEmpty();
    assertThat(converge).as("converge lines run").isGreaterThanOrEqualTo(10);
  }

  @Test
  void examplesExecMainClassIsTheOverridableProperty() throws Exception {
    // an exec:java <mainClass> set to a class wins over -Dexec.mainClass: README's "run one service" would run the demo
    assertThat(execMainClass()).isEqualTo("${exec.mainClass}");
    assertThat(examplesProperty("exec.mainClass")).isEqualTo("io.converge.examples.Demo");
  }

  /**
   * The few lines this test does not run, each proven elsewhere or not ours to run: the clone itself, the
   * outside project's own build (run by examples' AdopterBuildIT; its directory and pom must exist), and a
   * request to the reader's own service on localhost.
   */
  private boolean checkedElsewhere(String where, List<String> words) throws IOException {
    if (words.size() >= 2 && words.get(0).equals("git") && words.get(1).equals("clone")) {
      return true;
    }
    if (words.equals(List.of("cd", "examples/adopter", "&&", "mvn", "-B", "test"))) {
      if (!Files.exists(root.resolve("examples/adopter/pom.xml"))) {
        problems.add(where + ": examples/adopter/pom.xml does not exist");
      }
      return true;
    }
    if (words.equals(List.of("bash", ".ci/run"))) {
      checkCiRun(where);
      return true;
    }
    return words.get(0).equals("curl") && words.stream().anyMatch(w -> w.startsWith("localhost:"));
  }

  /**
   * {@code bash .ci/run}: the test command CI runs. Running it here would run this suite inside itself; what
   * it must do is checked instead: it exists, its Maven line is exactly the suite ({@code mvn -B verify}, the
   * form {@link #checkMaven} accepts) and it installs the browser the console's browser test needs.
   */
  private void checkCiRun(String where) throws IOException {
    Path run = root.resolve(".ci/run");
    if (!Files.isRegularFile(run)) {
      problems.add(where + ": .ci/run does not exist");
      return;
    }
    List<String> mvn = Files.readAllLines(run).stream().map(String::strip).filter(l -> l.matches("(exec\\s+)?mvn\\b.*"))
        .toList();
    if (!mvn.equals(List.of("exec mvn -B verify")) && !mvn.equals(List.of("mvn -B verify"))) {
      problems.add(where + ": .ci/run's Maven lines are " + mvn + ", not the suite (mvn -B verify)");
    }
    String text = Files.readString(run);
    if (!text.contains("chromium-driver")) {
      problems.add(where + ": .ci/run does not install chromium-driver");
    }
  }

  /**
   * mvn: the test suite, or a build of examples or ops with -am, and exec:java only for examples (a class and
   * arguments that exist): ops is run from its distribution.
   */
  private void checkMaven(String where, List<String> words) throws Exception {
    if (words.equals(List.of("mvn", "-B", "verify")) || words.equals(List.of("mvn", "-B", "install", "-DskipTests"))) {
      return; // the suite, and the install of every artifact (what AdopterBuildIT does into a temporary repository)
    }
    String module = null;
    boolean am = false;
    List<String> goals = new ArrayList<>();
    Map<String, String> props = new LinkedHashMap<>();
    for (int i = 1; i < words.size(); i++) {
      String w = words.get(i);
      if (w.equals("-pl") && i + 1 < words.size()) {
        module = words.get(++i);
      } else if (w.equals("-am")) {
        am = true;
      } else if (w.startsWith("-D")) {
        int eq = w.indexOf('=');
        props.put(eq < 0 ? w.substring(2) : w.substring(2, eq), eq < 0 ? "true" : w.substring(eq + 1));
      } else if (w.equals("-B") || w.equals("-q")) {
        continue;
      } else if (Set.of("package", "verify", "exec:java").contains(w)) {
        goals.add(w);
      } else {
        problems.add(where + ": unknown word " + w);
        return;
      }
    }
    if (!Set.of("examples", "ops").contains(module) || !am || !props.containsKey("skipTests")
        || !Set.of("skipTests", "exec.mainClass", "exec.args").containsAll(props.keySet()) || goals.isEmpty()
        || !Set.of("package", "verify").contains(goals.get(0))) {
      problems.add(where + ": not a known form: mvn -B [-q] -DskipTests -pl examples|ops -am package|verify "
          + "[exec:java [-Dexec.mainClass=...] [-Dexec.args=...]] (-am: a fresh clone has installed nothing)");
      return;
    }
    if (!goals.contains("exec:java")) {
      if (props.size() > 1) {
        problems.add(where + ": exec properties without exec:java");
      }
      return;
    }
    if (module.equals("ops")) {
      // -am puts examples in the reactor and its exec:java runs first: the demo, given converge's arguments
      problems.add(where + ": mvn -pl ops -am ... exec:java also runs exec:java in examples (the demo); "
          + "write mvn -B -DskipTests -pl ops -am package, then ops/target/converge/bin/converge ...");
      return;
    }
    List<String> args = props.containsKey("exec.args") ? Words.split(props.get("exec.args")) : List.of();
    String main = props.getOrDefault("exec.mainClass", examplesProperty("exec.mainClass"));
    Path source = root.resolve("examples/src/main/java").resolve(main.replace('.', '/') + ".java");
    if (!Files.exists(source) || !Files.readString(source).contains("public static void main(String[] args)")) {
      problems.add(where + ": no main class " + main + " in examples");
    } else if (main.equals("io.converge.examples.Demo")) {
      args.stream().filter(a -> !DEMO_ARG.matcher(a).matches())
          .forEach(a -> problems.add(where + ": the demo takes no argument " + a));
    }
  }

  /** A converge line: parsed by the command line, then run from the distribution (db commands on a real schema). */
  private void runConverge(String where, List<String> written) throws Exception {
    List<String> args = new ArrayList<>();
    for (String w : written) {
      String a = w.replace("[", "").replace("]", "");
      if (a.isEmpty()) {
        continue;
      }
      if (PLACEHOLDERS.containsKey(a)) {
        a = PLACEHOLDERS.get(a);
      } else if (a.matches("[A-Z][A-Z_]+")) {
        problems.add(where + ": unknown placeholder " + a + " (add it to PLACEHOLDERS)");
        return;
      }
      args.add(a);
    }
    boolean onDb = !args.isEmpty() && DB_COMMANDS.contains(args.get(0)) && !args.contains("--help");
    // the database commands' lines leave out the database options (README: "each with the database options")
    if (!parse(where, onDb ? withDatabase(args) : args)) {
      return;
    }
    if (!onDb && !(args.equals(List.of("--help")) || args.equals(List.of("-h")))) {
      return; // dev and bench start servers: parsed above, run as commands, never in the suite
    }
    List<String> run = onDb ? withDatabase(args) : args;
    boolean action = written.stream().anyMatch(w -> PLACEHOLDERS.containsKey(w.replace("[", "").replace("]", "")));
    // an action on a key or id that is not there exits 3: the command ran and found nothing to do
    int expected = action ? 3 : 0;
    started.add(runs.submit(() -> {
      Run r = Dist.run(dist, db.env(), run);
      if (r.status() != expected) {
        problems.add(where + ": ran converge " + run + ", expected exit " + expected + "\n" + r.both());
      }
      return null;
    }));
  }

  /** {@code args} with the database options replaced by (or completed with) the test schema's. */
  private List<String> withDatabase(List<String> args) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (Set.of("--jdbc-url", "--user", "--schema", "--password").contains(a)) {
        i++;
      } else {
        out.add(a);
      }
    }
    out.addAll(db.options());
    return out;
  }

  /** True when the command line accepts {@code args}: its commands, options and parameters exist. */
  private boolean parse(String where, List<String> args) {
    try {
      ConvergeCli.commandLine().parseArgs(args.toArray(String[]::new));
      return true;
    } catch (CommandLine.ParameterException e) {
      problems.add(where + ": converge " + args + ": " + e.getMessage());
      return false;
    }
  }

  /** Every command line of a fenced bash block, by "file:line", split into words as the shell does. */
  private Map<String, List<String>> commands() throws Exception {
    Map<String, List<String>> commands = new LinkedHashMap<>();
    List<Path> docs = new ArrayList<>();
    markdown(root, docs);
    for (Path doc : docs) {
      List<String> lines = Files.readAllLines(doc);
      boolean inBash = false;
      StringBuilder command = new StringBuilder();
      int start = 0;
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        if (line.startsWith("```")) {
          inBash = !inBash && Set.of("bash", "sh", "shell").contains(line.substring(3).trim());
          continue;
        }
        if (!inBash) {
          continue;
        }
        if (command.length() == 0) {
          start = i + 1;
        }
        if (line.endsWith("\\")) {
          command.append(line, 0, line.length() - 1).append(' ');
          continue;
        }
        command.append(line);
        List<String> words = Words.split(command.toString());
        command.setLength(0);
        // VAR=value before the command: the environment (the converge runs set their own)
        while (!words.isEmpty() && words.get(0).matches("[A-Z_]+=.*")) {
          words = words.subList(1, words.size());
        }
        if (!words.isEmpty()) {
          commands.put(root.relativize(doc) + ":" + start + ": " + String.join(" ", words), words);
        }
      }
    }
    return commands;
  }

  /** The Markdown files under {@code dir}, without build output and hidden directories. */
  private static void markdown(Path dir, List<Path> found) throws Exception {
    List<Path> entries;
    try (Stream<Path> list = Files.list(dir)) {
      entries = list.sorted().toList();
    }
    for (Path p : entries) {
      String name = p.getFileName().toString();
      if (Files.isDirectory(p) && !name.equals("target") && !name.startsWith(".")) {
        markdown(p, found);
      } else if (name.endsWith(".md")) {
        found.add(p);
      }
    }
  }

  private String execMainClass() throws Exception {
    NodeList plugins = examplesPom().getElementsByTagName("plugin");
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      if (plugin.getElementsByTagName("artifactId").item(0).getTextContent().equals("exec-maven-plugin")) {
        return plugin.getElementsByTagName("mainClass").item(0).getTextContent().trim();
      }
    }
    throw new AssertionError("no exec-maven-plugin in examples/pom.xml");
  }

  private String examplesProperty(String name) throws Exception {
    NodeList found = examplesPom().getElementsByTagName(name);
    return found.getLength() == 0 ? null : found.item(0).getTextContent().trim();
  }

  private Document examplesPom() throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(root.resolve("examples/pom.xml").toFile());
  }

  /** The shell's word splitting, for the lines of the READMEs: quotes, and a comment from an unquoted #. */
  static final class Words {

    private Words() {
    }

    static List<String> split(String line) {
      List<String> words = new ArrayList<>();
      StringBuilder w = new StringBuilder();
      boolean inWord = false;
      char quote = 0;
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        if (quote != 0) {
          if (c == quote) {
            quote = 0;
          } else {
            w.append(c);
          }
        } else if (c == '\'' || c == '"') {
          quote = c;
          inWord = true;
        } else if (Character.isWhitespace(c)) {
          if (inWord) {
            words.add(w.toString());
            w.setLength(0);
            inWord = false;
          }
        } else if (c == '#' && !inWord) {
          break;
        } else {
          w.append(c);
          inWord = true;
        }
      }
      if (inWord) {
        words.add(w.toString());
      }
      return words;
    }
  }
}
