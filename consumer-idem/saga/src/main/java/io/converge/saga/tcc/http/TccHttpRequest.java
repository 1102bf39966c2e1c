package io.converge.saga.tcc.http;

import io.converge.saga.tcc.TccCall;
import java.util.Objects;

/**
 * One branch call received over HTTP. Immutable apart from the array, which callers must not modify.
 *
 * @param call the tenant, global id, branch id and operation read from the headers
 * @param payload the request body (the branch's data, JSON by convention); never null, may be empty
 */
public record TccHttpRequest(TccCall call, byte[] payload) {

  /** Rejects nulls. */
  public TccHttpRequest {
    Objects.requireNonNull(call, "call");
    Objects.requireNonNull(payload, "payload");
  }
}
