package io.converge.ops.bench;

/** The report tests' scenario: no set-up, each call counts one unit, an optional reference. */
final class IdleScenario extends NamedScenario {

  private final String reference;

  IdleScenario(String name, String unit) {
    this(name, unit, null);
  }

  IdleScenario(String name, String unit, String reference) {
    super(name, unit);
    this.reference = reference;
  }

  @Override
  public void setUp(BenchEnv env, int threads) {
  }

  @Override
  public int runOnce(int worker) {
    return 1;
  }

  @Override
  public String reference() {
    return reference;
  }

  @Override
  public void close() {
  }
}
