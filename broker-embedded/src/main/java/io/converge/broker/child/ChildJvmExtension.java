package io.converge.broker.child;

import io.converge.broker.junit.TypedParameterResolver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * JUnit 5 extension of the crash tests: gives a test method a {@link ChildJvms} parameter; after the
 * test it kills the children still running; when the test fails, each child's output is added to the
 * failure (as a suppressed exception), so that a crash test that fails says what the child did.
 */
public final class ChildJvmExtension extends TypedParameterResolver<ChildJvms>
    implements
      AfterEachCallback,
      TestExecutionExceptionHandler {

  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(ChildJvmExtension.class);

  /** Created by JUnit. */
  public ChildJvmExtension() {
    super(ChildJvms.class, (parameter, context) -> jvms(context));
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
    ChildJvms jvms = context.getStore(NS).get(ChildJvms.class, ChildJvms.class);
    if (jvms != null) {
      for (ChildJvm child : jvms.started()) {
        failure.addSuppressed(new ChildOutput(child.name() + " output:\n" + child.output()));
      }
    }
    throw failure;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    ChildJvms jvms = context.getStore(NS).remove(ChildJvms.class, ChildJvms.class);
    if (jvms != null) {
      jvms.closeAll();
    }
  }

  private static ChildJvms jvms(ExtensionContext context) {
    return context.getStore(NS).getOrComputeIfAbsent(ChildJvms.class, k -> {
      try {
        return new ChildJvms(Files.createTempDirectory("converge-child-"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, ChildJvms.class);
  }

  /** A child's output attached to a failure; no stack trace of its own. */
  private static final class ChildOutput extends Exception {

    ChildOutput(String message) {
      super(message, null, false, false);
    }
  }
}
