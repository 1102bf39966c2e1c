package io.converge.ops;

import java.util.List;

/**
 * More subcommands of {@code converge}, found with {@link java.util.ServiceLoader}: {@code converge-ops}
 * adds {@code dev} and {@code bench}, which need the embedded servers and so are never on a production
 * command's classpath.
 */
public interface ConvergeCommands {

  /** The picocli commands to add (objects annotated with {@code @Command}). */
  List<Object> commands();
}
