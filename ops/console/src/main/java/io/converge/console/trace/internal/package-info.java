/** The timeline's SQL. Not for users. */
package io.converge.console.trace.internal;
