package io.converge.broker.postgres;

import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving tests a real PostgreSQL: the JVM's {@link ConvergePostgres#shared()}
 * server (embedded, or external when configured). Resolves parameters of type
 * {@link ConvergePostgres} and {@link DataSource}; a {@code DataSource} is bound to a fresh schema,
 * one per test class (shared by its tests), so classes never see each other's tables.
 */
public final class PostgresExtension implements ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
      .create(PostgresExtension.class);

  /** Created by JUnit. */
  public PostgresExtension() {
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == DataSource.class || type == ConvergePostgres.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    if (parameter.getParameter().getType() == ConvergePostgres.class) {
      return ConvergePostgres.shared();
    }
    return schemaOf(context);
  }

  /** The data source of the current test class's schema, created on first call. */
  public static DataSource schemaOf(ExtensionContext context) {
    ExtensionContext classContext = context;
    while (classContext.getParent().isPresent() && classContext.getTestMethod().isPresent()) {
      classContext = classContext.getParent().get();
    }
    String prefix = classContext.getTestClass()
        .map(c -> c.getSimpleName().toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_"))
        .map(s -> s.length() > 30 ? s.substring(0, 30) : s)
        .filter(s -> Character.isLetter(s.charAt(0)))
        .orElse("test");
    return classContext.getStore(NAMESPACE)
        .getOrComputeIfAbsent("schema", k -> ConvergePostgres.shared().newSchema(prefix), DataSource.class);
  }
}
