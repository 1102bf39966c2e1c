package io.converge.broker.junit;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The base of Converge's JUnit 5 extensions: resolves the parameters of one type (of constructors,
 * lifecycle and test methods), and holds the helpers they share: a server started once per test JVM and
 * stopped when the JVM exits ({@link #sharedServer}), and unique topic/group names ({@link #uniqueName}).
 * Subclasses are created by JUnit and are stateless; thread-safe.
 *
 * @param <T> the type of the parameters this extension resolves
 */
public abstract class TypedParameterResolver<T> implements ParameterResolver {

  /** The servers of this JVM by owner; guarded by itself. */
  private static final Map<Class<?>, Object> SHARED = new HashMap<>();
  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_-]{1,80}");

  private final Class<T> type;
  private final BiFunction<ParameterContext, ExtensionContext, T> value;

  /** An extension resolving parameters of exactly {@code type} to what {@code value} returns for them. */
  protected TypedParameterResolver(Class<T> type, BiFunction<ParameterContext, ExtensionContext, T> value) {
    this.type = type;
    this.value = value;
  }

  @Override
  public final boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == type;
  }

  @Override
  public final Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return value.apply(parameter, context);
  }

  /**
   * The server {@code owner} shares with every test of this JVM: started by {@code start} on the first call,
   * stopped by {@code stop} when the JVM exits (a shutdown hook). Not tied to JUnit's root context: the test
   * plugins run each class in a launcher execution of its own when they run several JVMs ({@code forkCount} above
   * 1), whose root context closes after every class; a server stopped there was started again for the next class
   * (12-45 s for Pulsar), and a client a test kept in a static field was left talking to the stopped one.
   *
   * @param context the calling extension's context (unused: the server outlives it)
   * @throws RuntimeException what {@code start} threw; the next call starts again
   */
  protected static <S> S sharedServer(ExtensionContext context, Class<?> owner, Supplier<S> start, Consumer<S> stop) {
    synchronized (SHARED) {
      @SuppressWarnings("unchecked")
      S server = (S) SHARED.get(owner);
      if (server == null) {
        S started = start.get();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop.accept(started),
            "converge-stop-" + owner.getSimpleName()));
        SHARED.put(owner, started);
        server = started;
      }
      return server;
    }
  }

  /**
   * {@code prefix-} followed by 12 random hex digits: a topic (or group) name unique to this call.
   *
   * @throws IllegalArgumentException when {@code prefix} is not 1 to 80 of {@code [A-Za-z0-9_-]} (characters
   *     the brokers accept in names)
   */
  protected static String uniqueName(String prefix) {
    if (prefix == null || !PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + ", but was " + prefix);
    }
    return prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }
}
