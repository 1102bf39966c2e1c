/**
 * W3C tracing with OpenTelemetry for every Converge module: {@link io.converge.core.tracing.Tracing} is the one
 * entry; the OpenTelemetry API is an optional dependency, and without it nothing is traced and no OpenTelemetry
 * class is loaded. The span names and attributes follow the OpenTelemetry messaging semantic conventions; the
 * root README's Tracing section lists them.
 */
package io.converge.core.tracing;
