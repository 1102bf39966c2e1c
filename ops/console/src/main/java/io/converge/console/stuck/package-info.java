/**
 * Stuck alerts: {@link io.converge.console.stuck.StuckGauges} exports {@code converge.stuck{kind}} gauges from
 * the console's {@code Inspector}, refreshed on a schedule, and {@link io.converge.console.stuck.StuckWebhook}
 * tells a webhook once about each newly stuck item.
 */
package io.converge.console.stuck;
