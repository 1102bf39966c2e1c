/**
 * The OpenTelemetry side of {@link io.converge.core.tracing.Tracing}: only {@link
 * io.converge.core.tracing.internal.OtelSpans} refers to OpenTelemetry's classes, and it is loaded only when the API
 * is on the classpath. Not an API for applications.
 */
package io.converge.core.tracing.internal;
