package io.converge.saga.tcc;

import io.converge.core.internal.Require;
import java.util.Objects;

/**
 * One call of a TCC branch, as the coordinator names it: the key of its barrier row. Immutable.
 *
 * @param tenant the tenant ({@link io.converge.core.Envelope#TENANT}); 1 to {@value #MAX_TENANT} characters, not blank
 * @param globalId the global transaction's id ({@link TccHeaders#GLOBAL_ID}); 1 to {@value #MAX_ID} characters, not
 *     blank
 * @param branchId the branch's id within it ({@link TccHeaders#BRANCH_ID}); 1 to {@value #MAX_ID} characters, not
 *     blank
 * @param operation never null
 */
public record TccCall(String tenant, String globalId, String branchId, TccOperation operation) {

  /** The longest tenant accepted. */
  public static final int MAX_TENANT = 128;
  /** The longest global or branch id accepted. */
  public static final int MAX_ID = 200;

  /**
   * Validates.
   *
   * @throws IllegalArgumentException naming the field and quoting the bad value
   */
  public TccCall {
    check("tcc.call.tenant", tenant, MAX_TENANT);
    check("tcc.call.globalId", globalId, MAX_ID);
    check("tcc.call.branchId", branchId, MAX_ID);
    Objects.requireNonNull(operation, "tcc.call.operation is required");
  }

  private static void check(String property, String value, int max) {
    Require.that(value != null && !value.isBlank() && value.length() <= max, property,
        "be 1 to " + max + " characters, not blank", value == null ? null : "'" + value + "'");
  }

  /** The same branch, another operation. */
  public TccCall with(TccOperation other) {
    return new TccCall(tenant, globalId, branchId, other);
  }

  @Override
  public String toString() {
    return operation.wireName() + " of branch " + branchId + " of global " + globalId + " (tenant " + tenant + ")";
  }
}
