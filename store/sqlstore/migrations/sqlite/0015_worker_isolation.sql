-- The worker's isolation: a job's priority (money-moving work before
-- notifications) orders the claim, and its partition (the webhook endpoint
-- a delivery waits on) lets a worker cap the runs that wait on one thing.
-- An endpoint that keeps failing pauses: its deliveries wait until
-- paused_until, and the fan-out schedules new ones no earlier.

ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
ALTER TABLE jobs ADD COLUMN partition_key TEXT;
DROP INDEX jobs_run_at_idx;
CREATE INDEX jobs_claim_idx ON jobs (priority, run_at, id) WHERE completed_at IS NULL;
CREATE INDEX jobs_partition_idx ON jobs (partition_key) WHERE partition_key IS NOT NULL AND completed_at IS NULL;

ALTER TABLE webhook_endpoints ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN paused_until TIMESTAMP;
ALTER TABLE webhook_endpoints ADD COLUMN pause_reason TEXT NOT NULL DEFAULT '';
