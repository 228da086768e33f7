-- Jobs with a life: a stored state (available, running, retrying,
-- needs_attention, completed), when the last attempt began and when the job
-- completed. Completed jobs stay until the retention purge, so dedup keys
-- and the claim index cover pending jobs only (completed_at IS NULL: no
-- index reads state, which every claim changes). paykit_leases holds named
-- leases, such as the one that lets one instance at a time purge.

ALTER TABLE jobs ADD COLUMN state TEXT NOT NULL DEFAULT 'available';
ALTER TABLE jobs ADD COLUMN attempted_at TIMESTAMPTZ;
ALTER TABLE jobs ADD COLUMN completed_at TIMESTAMPTZ;
UPDATE jobs SET state = 'retrying' WHERE attempts > 0;

DROP INDEX jobs_dedup_key_key;
CREATE UNIQUE INDEX jobs_dedup_key_key ON jobs (dedup_key) WHERE dedup_key IS NOT NULL AND completed_at IS NULL;
DROP INDEX jobs_run_at_idx;
CREATE INDEX jobs_run_at_idx ON jobs (run_at, id) WHERE completed_at IS NULL;
CREATE INDEX jobs_completed_idx ON jobs (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE paykit_leases (
    name       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    owner      TEXT             NOT NULL,
    held_until TIMESTAMPTZ      NOT NULL
);
