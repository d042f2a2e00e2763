-- Renews `p_holder`'s block of `p_org` for the UTC day of `p_at` under the quota lock: the block keeps `p_keep_*`
-- (what the holder has left unspent of its block of that day, all its inserts settled) and gets, for each quota in
-- force (a non-null limit), a 32nd of the room left after the usage and every block, at most `p_cap_*`. When the room
-- of any quota in force would give less than `p_min_*`, nothing is granted and the block is given back whole (its
-- row deleted): the holder then creates through the exact check. Answers the block now held (zeros: none).
CREATE OR REPLACE FUNCTION conveyor_quota_block(p_org uuid, p_holder uuid, p_at timestamptz, p_day bigint, p_month bigint, p_pending bigint, p_bytes bigint,
  p_keep_jobs bigint, p_keep_pending bigint, p_keep_bytes bigint, p_min_jobs bigint, p_cap_jobs bigint, p_min_bytes bigint, p_cap_bytes bigint,
  OUT jobs bigint, OUT pending_jobs bigint, OUT bytes bigint)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  today date := (p_at AT TIME ZONE 'UTC')::date;
  b_day bigint;
  b_month bigint;
  b_pending bigint;
  b_bytes bigint;
  room bigint;
  used bigint;
  held bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(36, hashtext(p_org::text));
  SELECT coalesce(sum(q.jobs) FILTER (WHERE q.day = today), 0), coalesce(sum(q.jobs) FILTER (WHERE q.day >= date_trunc('month', today)::date AND q.day <= today), 0),
         coalesce(sum(q.pending_jobs) FILTER (WHERE q.day >= today - 1), 0), coalesce(sum(q.bytes) FILTER (WHERE q.day >= today - 1), 0)
    INTO b_day, b_month, b_pending, b_bytes FROM quota_blocks q WHERE q.org_id = p_org AND q.holder <> p_holder;
  jobs := 0; pending_jobs := 0; bytes := 0;
  IF p_day IS NOT NULL OR p_month IS NOT NULL THEN
    room := NULL;
    IF p_day IS NOT NULL THEN
      SELECT p_day - coalesce(sum(jobs_created), 0) - b_day - p_keep_jobs INTO room FROM usage_counts WHERE org_id = p_org AND day = today;
    END IF;
    IF p_month IS NOT NULL THEN
      SELECT least(room, p_month - coalesce(sum(jobs_created), 0) - b_month - p_keep_jobs) INTO room FROM usage_counts
       WHERE org_id = p_org AND day >= date_trunc('month', today)::date AND day <= today;
    END IF;
    jobs := least(p_cap_jobs, room / 32);
  END IF;
  IF p_pending IS NOT NULL OR p_bytes IS NOT NULL THEN
    SELECT coalesce(sum(s.pending_jobs), 0), coalesce(sum(s.bytes), 0) INTO used, held FROM stored_payload_bytes s WHERE s.org_id = p_org;
    IF p_pending IS NOT NULL THEN pending_jobs := least(p_cap_jobs, (p_pending - used - b_pending - p_keep_pending) / 32); END IF;
    IF p_bytes IS NOT NULL THEN bytes := least(p_cap_bytes, (p_bytes - held - b_bytes - p_keep_bytes) / 32); END IF;
  END IF;
  IF ((p_day IS NOT NULL OR p_month IS NOT NULL) AND jobs < p_min_jobs) OR (p_pending IS NOT NULL AND pending_jobs < p_min_jobs)
     OR (p_bytes IS NOT NULL AND bytes < p_min_bytes) THEN
    DELETE FROM quota_blocks q WHERE q.org_id = p_org AND q.holder = p_holder;
    jobs := 0; pending_jobs := 0; bytes := 0;
    RETURN;
  END IF;
  -- Only the quotas in force are held (what is kept of one no longer in force is dropped).
  IF p_day IS NOT NULL OR p_month IS NOT NULL THEN jobs := jobs + greatest(0, p_keep_jobs); END IF;
  IF p_pending IS NOT NULL THEN pending_jobs := pending_jobs + greatest(0, p_keep_pending); END IF;
  IF p_bytes IS NOT NULL THEN bytes := bytes + greatest(0, p_keep_bytes); END IF;
  INSERT INTO quota_blocks AS q (org_id, holder, day, jobs, pending_jobs, bytes) VALUES (p_org, p_holder, today, jobs, pending_jobs, bytes)
  ON CONFLICT (org_id, holder) DO UPDATE SET day = EXCLUDED.day, jobs = EXCLUDED.jobs, pending_jobs = EXCLUDED.pending_jobs, bytes = EXCLUDED.bytes;
END
$$;
