/**
 * What every Converge module shares with the application: the exception hierarchy rooted at
 * {@link io.converge.core.ConvergeException}, the envelope's header names ({@link io.converge.core.Envelope}),
 * message signatures ({@link io.converge.core.MessageSignature}, {@link io.converge.core.SigningKeys}) and schema
 * versions ({@link io.converge.core.SchemaVersion}), message ids ({@link io.converge.core.MessageIds}), the modules'
 * database migrations ({@link io.converge.core.Migrations}) and the wait for a database that is not there yet at
 * start-up ({@link io.converge.core.DatabaseWait}).
 */
package io.converge.core;
