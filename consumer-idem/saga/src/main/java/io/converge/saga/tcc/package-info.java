/**
 * TCC (Try-Confirm-Cancel) on top of the saga coordinator: the participant's branch barrier and the headers of a
 * branch call.
 */
package io.converge.saga.tcc;
