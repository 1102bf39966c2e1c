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
 * A {@link ContractTest} that starts a child JVM: one at a time ({@link TxnProducerContract#CHILD}), since
 * starting several at once starves the broker of the CPU.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Test
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock(value = TxnProducerContract.ALONE, mode = ResourceAccessMode.READ)
@ResourceLock(TxnProducerContract.CHILD)
@interface CrashTest {
}
