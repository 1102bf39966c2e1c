package io.converge.ops.bench;

/** A {@link Scenario} whose name and unit are fixed at construction; subclasses do the work. */
public abstract class NamedScenario implements Scenario {

  private final String name;
  private final String unit;

  /** A scenario called {@code name} on the command line, counting {@code unit}s ("msg", "tx"). */
  protected NamedScenario(String name, String unit) {
    this.name = name;
    this.unit = unit;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final String unit() {
    return unit;
  }
}
