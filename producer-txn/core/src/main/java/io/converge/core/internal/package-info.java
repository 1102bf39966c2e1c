/**
 * Machinery shared by the Converge modules (backoff, bounded purges, validation of settings). Not an
 * API for applications: its types may change between minor versions.
 */
package io.converge.core.internal;
