-- The saga's trace context (issue 34): the W3C traceparent and tracestate of the saga's span, started at
-- SagaCoordinator.start under the context active then. Every span of the saga's steps (a command sent, re-sent after
-- a timeout or by a restarted coordinator, a compensation, a reply applied, a TCC branch's HTTP call) is its child,
-- whichever instance makes it, so the saga stays one trace. Null for a saga started without tracing, or before this
-- migration: its spans start new traces.
ALTER TABLE converge_saga
  ADD COLUMN traceparent text,
  ADD COLUMN tracestate  text;
