/**
 * The HTTP {@code Idempotency-Key} filter (Stripe's semantics, the IETF draft's status codes): the
 * entry point {@link io.converge.consumer.http.IdempotencyFilter} and its builder, the endpoints it
 * protects ({@link io.converge.consumer.http.IdempotentEndpoint}, {@link io.converge.consumer.http.Idempotent}),
 * the tenant SPI ({@link io.converge.consumer.http.TenantResolver}), settings, metrics and the purge of
 * expired keys; and the filter verifying signed callbacks ({@link io.converge.consumer.http.SignedCallbackFilter},
 * its secrets {@link io.converge.consumer.http.CallbackSecrets}), which runs them through the same store. Needs {@code jakarta.servlet-api} 6 (the application's container provides it) and a
 * PostgreSQL {@code DataSource} with the {@code idempotency} migrations applied.
 */
package io.converge.consumer.http;
