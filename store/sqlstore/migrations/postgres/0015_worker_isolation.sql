-- The worker's isolation: a job's priority (money-moving work before
-- notifications) orders the claim, and its partition (the webhook endpoint
-- a delivery waits on) lets a worker cap the runs that wait on one thing.
-- An endpoint that keeps failing pauses: its deliveries wait until
-- paused_until, and the fan-out schedules new ones no earlier.

ALTER TABLE jobs ADD COLUMN priority SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE jobs ADD COLUMN partition_key TEXT;
DROP INDEX jobs_run_at_idx;
CREATE INDEX jobs_claim_idx ON jobs (priority, run_at, id) WHERE completed_at IS NULL;
CREATE INDEX jobs_partition_idx ON jobs (partition_key) WHERE partition_key IS NOT NULL AND completed_at IS NULL;

ALTER TABLE webhook_endpoints ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN paused_until TIMESTAMPTZ;
ALTER TABLE webhook_endpoints ADD COLUMN pause_reason TEXT NOT NULL DEFAULT '';

CREATE OR REPLACE FUNCTION paykit_schedule_deliveries(p_base_id TEXT, p_kind TEXT, p_event_id TEXT,
    p_run_at TIMESTAMPTZ, p_created_at TIMESTAMPTZ, p_state TEXT,
    p_merchant_id TEXT, p_environment TEXT, p_enabled TEXT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO jobs (id, kind, merchant_id, environment, target_id, payload, dedup_key, run_at,
        attempts, lease_owner, last_error, created_at, version, state, priority, partition_key)
    SELECT p_base_id || '.' || row_number() OVER (ORDER BY e.id), p_kind, e.merchant_id, e.environment, p_event_id,
        convert_to('{"endpoint_id":"' || e.id || '"}', 'UTF8'),
        p_kind || ':' || e.id || ':' || p_event_id, GREATEST(p_run_at, COALESCE(e.paused_until, p_run_at)),
        0, '', '', p_created_at, 0, p_state, 1, e.id
    FROM webhook_endpoints e WHERE e.merchant_id = p_merchant_id AND e.environment = p_environment AND e.status = p_enabled
    ON CONFLICT DO NOTHING;
END
$$;
