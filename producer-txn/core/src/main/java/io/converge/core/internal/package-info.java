/**
 * Machinery shared by the Converge modules (backoff, bounded purges, validation of settings, the one
 * classification of database errors, the check for an optional dependency, the commit bookkeeping a
 * consumer and a producer share). Not an API for applications: its types may change between minor
 * versions.
 */
package io.converge.core.internal;
