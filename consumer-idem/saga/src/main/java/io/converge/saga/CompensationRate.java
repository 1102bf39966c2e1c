package io.converge.saga;

/**
 * The rate of one participant's compensation commands: a token bucket of {@code burst} tokens refilled at
 * {@code perSecond}. Per coordinator instance. Immutable; validated by {@link SagaCoordinatorBuilder#build()}.
 *
 * @param perSecond tokens a second, above 0
 * @param burst tokens saved up at most (the bucket's size), at least 1
 */
public record CompensationRate(double perSecond, int burst) {
}
