package io.converge.testing;

import java.util.Map;

/**
 * A message as a consumer received it, whatever the broker.
 *
 * @param id the {@code converge-message-id} header
 * @param key the message key, or null
 * @param headers every header/property
 * @param payload the payload
 */
public record Delivered(String id, String key, Map<String, String> headers, byte[] payload) {
}
