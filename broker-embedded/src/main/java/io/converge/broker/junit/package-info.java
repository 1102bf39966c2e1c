/** The shared base of the JUnit 5 extensions that give tests the embedded servers and child JVMs. */
package io.converge.broker.junit;
