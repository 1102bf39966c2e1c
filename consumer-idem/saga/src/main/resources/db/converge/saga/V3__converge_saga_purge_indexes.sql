-- The purge's lookups (SagaPurger, review of the saga purge): the finished sagas oldest first, and the late replies
-- recorded for sagas already purged ("no such saga") with the resolutions of the tickets such a reply opens: the
-- only events written without a saga row. Without these each batch scans the whole table.
CREATE INDEX converge_saga_finished ON converge_saga (updated_at)
  WHERE state IN ('COMPLETED', 'COMPENSATED', 'COMPENSATION_FAILED', 'STOPPED');
CREATE INDEX converge_saga_event_late ON converge_saga_event (at) WHERE kind IN ('LATE_REPLY', 'OPERATOR_RESOLVED');
