-- Idempotency records, one per (scope, Idempotency-Key).

CREATE TABLE idempotency_records (
    merchant_id     TEXT COLLATE "C" NOT NULL,
    environment     TEXT             NOT NULL,
    "key"           TEXT COLLATE "C" NOT NULL,
    fingerprint     TEXT             NOT NULL,
    state           TEXT             NOT NULL,
    recovery_point  TEXT             NOT NULL,
    resource_id     TEXT             NOT NULL,
    locked_until    TIMESTAMPTZ,
    response_status INTEGER          NOT NULL,
    response_body   BYTEA,
    created_at      TIMESTAMPTZ      NOT NULL,
    updated_at      TIMESTAMPTZ      NOT NULL,
    expires_at      TIMESTAMPTZ      NOT NULL,
    version         BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT idempotency_records_pkey PRIMARY KEY (merchant_id, environment, "key")
);
CREATE INDEX idempotency_records_purge_idx ON idempotency_records (expires_at) WHERE state = 'complete';
