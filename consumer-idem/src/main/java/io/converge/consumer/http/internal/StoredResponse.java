package io.converge.consumer.http.internal;

import java.util.Map;

/** A response as stored and replayed: status, whitelisted headers (multiple values joined by ", "), body. */
record StoredResponse(int status, Map<String, String> headers, byte[] body) {
}
