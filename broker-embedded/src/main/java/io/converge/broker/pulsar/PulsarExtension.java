package io.converge.broker.pulsar;

import io.converge.broker.junit.TypedParameterResolver;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension that starts one {@link EmbeddedPulsar} per test JVM on first use (a child JVM,
 * 12-45 s), shares it between test classes and stops it when the JVM exits. Resolves
 * {@code EmbeddedPulsar} parameters. Isolate tests by {@link #uniqueTopic(String) unique topics}.
 */
public final class PulsarExtension extends TypedParameterResolver<EmbeddedPulsar> {

  /** Created by JUnit. */
  public PulsarExtension() {
    super(EmbeddedPulsar.class, (parameter, context) -> server(context));
  }

  /** The server shared by every test of this JVM, started on first call. */
  public static EmbeddedPulsar server(ExtensionContext context) {
    return sharedServer(context, PulsarExtension.class, () -> EmbeddedPulsar.builder().build().start(),
        EmbeddedPulsar::stop);
  }

  /** {@code persistent://public/default/<prefix>-<12 random hex digits>}. */
  public static String uniqueTopic(String prefix) {
    return "persistent://public/default/" + uniqueName(prefix);
  }
}
