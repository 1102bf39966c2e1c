/**
 * A persistent saga coordinator built from Converge's own guarantees. {@link io.converge.saga.SagaDefinition}
 * describes a saga (its steps, their compensations, timeouts and retry policies, how replies are classified).
 * See the module README for the model, the tables, the states and the recovery.
 */
package io.converge.saga;
