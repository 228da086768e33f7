-- Durable background jobs. dedup_key is NULL when the job has none, so only
-- real keys are unique.

CREATE TABLE jobs (
    id          TEXT      NOT NULL PRIMARY KEY,
    kind        TEXT      NOT NULL,
    merchant_id TEXT      NOT NULL,
    environment TEXT      NOT NULL,
    target_id   TEXT      NOT NULL,
    payload     BLOB,
    dedup_key   TEXT,
    run_at      TIMESTAMP NOT NULL,
    attempts    INTEGER   NOT NULL DEFAULT 0,
    lease_owner TEXT      NOT NULL,
    lease_until TIMESTAMP,
    last_error  TEXT      NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    version     INTEGER   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX jobs_dedup_key_key ON jobs (dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX jobs_run_at_idx ON jobs (run_at, id);
