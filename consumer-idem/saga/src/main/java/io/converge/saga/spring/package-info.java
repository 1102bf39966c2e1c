/**
 * Spring Boot binding of converge-saga (Spring is an optional dependency): {@code converge.saga.*} properties and a
 * package-private auto-configuration.
 */
package io.converge.saga.spring;
