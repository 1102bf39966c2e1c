package io.converge.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A test of {@link TxnProducerContract} that runs concurrently with the contract's other tests (its own topics,
 * groups and ids) and shares the broker: never while a test holds it alone ({@link TxnProducerContract#ALONE}).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Test
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(value = TxnProducerContract.ALONE, mode = ResourceAccessMode.READ)
@interface ContractTest {
}
