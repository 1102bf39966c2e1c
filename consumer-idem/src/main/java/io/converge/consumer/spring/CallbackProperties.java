package io.converge.consumer.spring;

import io.converge.consumer.http.CallbackSecrets;
import io.converge.consumer.http.CallbackSettings;
import io.converge.consumer.http.IdempotentEndpoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * {@code converge.callback.*}: the signed-callback filter. Immutable, validated when the context starts.
 *
 * @param enabled turns the filter on; default false
 * @param migrate apply the {@code converge_idempotency_key} migration at start-up; default true
 * @param provider the payment provider's name (callbacks are stored under tenant {@code callback:<provider>});
 *     required
 * @param secrets the secrets callbacks are signed with, current first (two while the provider rotates); required
 * @param signatureHeader default {@code Converge-Signature}
 * @param tolerance how far a signature's timestamp may be from the server's clock, either way; default 5m
 * @param replayWindow how long a callback's answer is kept and replayed to copies; default 24h, longer than twice
 *     the tolerance
 * @param maxBodySize the largest callback body; default 1MB
 * @param endpoints the callback endpoints, first match wins; at least one
 * @param filterOrder the filter's order; default 0
 */
@ConfigurationProperties("converge.callback")
public record CallbackProperties(
    @DefaultValue("false") boolean enabled,
    @DefaultValue("true") boolean migrate,
    String provider,
    List<String> secrets,
    @DefaultValue(CallbackSettings.DEFAULT_SIGNATURE_HEADER) String signatureHeader,
    @DefaultValue("5m") Duration tolerance,
    @DefaultValue("24h") Duration replayWindow,
    @DefaultValue("1MB") DataSize maxBodySize,
    List<Endpoint> endpoints,
    @DefaultValue("0") int filterOrder) {

  /**
   * {@code converge.callback.endpoints[i].*}.
   *
   * @param method HTTP method; default POST
   * @param path path pattern ({@code /payments/{id}/provider-callback}); required
   */
  public record Endpoint(@DefaultValue("POST") String method, String path) {
  }

  CallbackSettings settings() {
    long size = maxBodySize.toBytes();
    if (size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "converge.callback.max-body-size must be at most 64MB, but was " + maxBodySize);
    }
    return new CallbackSettings(signatureHeader, tolerance, replayWindow, (int) size);
  }

  CallbackSecrets callbackSecrets() {
    return CallbackSecrets.of(secrets == null ? new String[0] : secrets.toArray(String[]::new));
  }

  List<IdempotentEndpoint> callbackEndpoints() {
    List<IdempotentEndpoint> out = new ArrayList<>();
    for (int i = 0; endpoints != null && i < endpoints.size(); i++) {
      try {
        out.add(IdempotentEndpoint.of(endpoints.get(i).method(), endpoints.get(i).path()));
      } catch (IllegalArgumentException ex) {
        throw new IllegalArgumentException("converge.callback.endpoints[" + i + "]: " + ex.getMessage(), ex);
      }
    }
    return out;
  }
}
