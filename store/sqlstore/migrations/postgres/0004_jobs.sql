-- Durable background jobs. dedup_key is NULL when the job has none, so only
-- real keys are unique.

CREATE TABLE jobs (
    id          TEXT COLLATE "C" NOT NULL,
    kind        TEXT             NOT NULL,
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    target_id   TEXT             NOT NULL,
    payload     BYTEA,
    dedup_key   TEXT COLLATE "C",
    run_at      TIMESTAMPTZ      NOT NULL,
    attempts    INTEGER          NOT NULL DEFAULT 0,
    lease_owner TEXT             NOT NULL,
    lease_until TIMESTAMPTZ,
    last_error  TEXT             NOT NULL,
    created_at  TIMESTAMPTZ      NOT NULL,
    version     BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT jobs_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX jobs_dedup_key_key ON jobs (dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX jobs_run_at_idx ON jobs (run_at, id);
