package io.converge.broker.pulsar;

import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension that starts one {@link EmbeddedPulsar} per test JVM on first use (a child JVM,
 * 12-45 s), shares it between test classes and stops it when the test run ends. Resolves
 * {@code EmbeddedPulsar} parameters. Isolate tests by {@link #uniqueTopic(String) unique topics}.
 */
public final class PulsarExtension implements ParameterResolver {

  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_-]{1,80}");
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(PulsarExtension.class);

  /** Created by JUnit. */
  public PulsarExtension() {
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EmbeddedPulsar.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return server(context);
  }

  /** The server shared by every test of this JVM, started on first call. */
  public static EmbeddedPulsar server(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE)
        .computeIfAbsent(Shared.class, k -> new Shared(), Shared.class).server;
  }

  /** {@code persistent://public/default/<prefix>-<12 random hex digits>}. */
  public static String uniqueTopic(String prefix) {
    if (prefix == null || !PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException("prefix must match " + PREFIX.pattern() + ", but was " + prefix);
    }
    return "persistent://public/default/" + prefix + "-"
        + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  private static final class Shared implements AutoCloseable {

    final EmbeddedPulsar server = EmbeddedPulsar.builder().build().start();

    @Override
    public void close() {
      server.stop();
    }
  }
}
