package io.converge.ops;

import io.converge.ops.bench.BenchCommand;
import io.converge.ops.chaos.ChaosCommand;
import java.util.List;

/** {@code converge dev}, {@code converge bench} and {@code converge chaos}: the commands that need the embedded servers (lib/dev/). */
public final class DevCommands implements ConvergeCommands {

  @Override
  public List<Object> commands() {
    return List.of(new DevCommand(), new BenchCommand(), new ChaosCommand());
  }
}
