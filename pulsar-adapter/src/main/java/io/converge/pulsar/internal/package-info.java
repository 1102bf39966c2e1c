/** The implementation of the Pulsar backend; not an API. */
package io.converge.pulsar.internal;
