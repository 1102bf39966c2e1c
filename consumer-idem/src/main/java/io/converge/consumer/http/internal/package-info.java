/**
 * The filter's implementation: the key store (claim, take-over, complete as compare-and-swap
 * statements), the request reader and fingerprint, the JSON canonicaliser, the held-back response.
 * Not an API: anything here may change.
 */
package io.converge.consumer.http.internal;
