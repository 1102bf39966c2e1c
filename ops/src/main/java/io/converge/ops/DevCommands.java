package io.converge.ops;

import io.converge.ops.bench.BenchCommand;
import java.util.List;

/** {@code converge dev} and {@code converge bench}: the commands that need the embedded servers (lib/dev/). */
public final class DevCommands implements ConvergeCommands {

  @Override
  public List<Object> commands() {
    return List.of(new DevCommand(), new BenchCommand());
  }
}
