-- The fast path's function (V3) refuses REPEATABLE READ for a Confirm or a Cancel. There the lookup of the other's row
-- after the try row's lock reads the transaction's first snapshot: the second of a Confirm and a Cancel racing got
-- the lock once the first committed (the first only locked the row, so no serialization error) and did not see its
-- row, and both bodies committed (TccBarrierIT#aConfirmAndACancelRacingInRepeatableReadNeverBothRun failed before).
-- The function now raises CVT01 there, so the call goes to the slow path, which refuses it with a typed error.
-- Unchanged otherwise (same signature, same statements).
CREATE OR REPLACE FUNCTION converge_tcc_barrier_commit(p_tenant text, p_global_id text, p_branch_id text, p_operation text,
                                            p_result bytea) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_tried text;
BEGIN
  IF p_operation = 'cancel' THEN
    -- the Try's row inserted now: the Try never ran here, an empty rollback (the cancel body must not count)
    INSERT INTO converge_tcc_barrier (tenant, global_id, branch_id, operation, origin, outcome, result)
    VALUES (p_tenant, p_global_id, p_branch_id, 'try', 'cancel-first', 'FENCED', ''::bytea)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'CVT01', MESSAGE = 'converge_tcc_barrier: not RAN (empty rollback)';
    END IF;
  END IF;
  INSERT INTO converge_tcc_barrier (tenant, global_id, branch_id, operation, origin, outcome, result)
  VALUES (p_tenant, p_global_id, p_branch_id, p_operation, p_operation, 'RAN', p_result)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'CVT01', MESSAGE = 'converge_tcc_barrier: not RAN (the ' || p_operation
      || ' row is taken)';
  END IF;
  IF p_operation = 'try' THEN
    RETURN;
  END IF;
  -- Confirm and Cancel serialize on the branch's try row (it exists for a Cancel that got here)
  SELECT origin INTO v_tried FROM converge_tcc_barrier
   WHERE tenant = p_tenant AND global_id = p_global_id AND branch_id = p_branch_id AND operation = 'try' FOR UPDATE;
  -- REPEATABLE READ: the lookup below would read the transaction's first snapshot, not what committed while the lock
  -- was waited for; not RAN here, the slow path refuses the call (TccIsolationException)
  IF current_setting('transaction_isolation') = 'repeatable read' THEN
    RAISE EXCEPTION USING ERRCODE = 'CVT01', MESSAGE = 'converge_tcc_barrier: not RAN (REPEATABLE READ)';
  END IF;
  IF v_tried IS DISTINCT FROM 'try' THEN
    RAISE EXCEPTION USING ERRCODE = 'CVT01', MESSAGE = 'converge_tcc_barrier: not RAN (no Try ran)';
  END IF;
  PERFORM 1 FROM converge_tcc_barrier
   WHERE tenant = p_tenant AND global_id = p_global_id AND branch_id = p_branch_id
     AND operation = CASE p_operation WHEN 'confirm' THEN 'cancel' ELSE 'confirm' END;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'CVT01', MESSAGE = 'converge_tcc_barrier: not RAN (the other of Confirm and '
      || 'Cancel took effect)';
  END IF;
END
$$;
