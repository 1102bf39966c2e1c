-- The barrier's fast path (io.converge.saga.tcc.TccBarrier#runAndCommit): called after the operation's body ran in
-- the same transaction, sent with the COMMIT in one round trip ("SELECT converge_tcc_barrier_commit(...); COMMIT").
--
-- It does what the slow path (TccBarrier#run) does before its body, with the body's result stored on the inserted row,
-- and succeeds only when the slow path would have answered RAN. In every other case (a duplicate, an empty rollback,
-- a hanging Try, a Confirm without its Try or after its Cancel, a Cancel after its Confirm) it raises SQLSTATE CVT01:
-- the COMMIT behind it is skipped, the transaction rolls back with the body's writes, and the caller asks the slow
-- path in a new transaction for the exact outcome. Same statements as the slow path, in the same order: inserts with
-- ON CONFLICT DO NOTHING, a row locked only once it is known to exist. VOLATILE (the default): each statement takes
-- a new snapshot in READ COMMITTED, so the Cancel (Confirm) lookup after the try row's lock sees a Confirm (Cancel)
-- that committed while the lock was waited for.
CREATE FUNCTION converge_tcc_barrier_commit(p_tenant text, p_global_id text, p_branch_id text, p_operation text,
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
