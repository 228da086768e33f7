-- Idempotency records, one per (scope, Idempotency-Key).

CREATE TABLE idempotency_records (
    merchant_id     TEXT      NOT NULL,
    environment     TEXT      NOT NULL,
    "key"           TEXT      NOT NULL,
    fingerprint     TEXT      NOT NULL,
    state           TEXT      NOT NULL,
    recovery_point  TEXT      NOT NULL,
    resource_id     TEXT      NOT NULL,
    locked_until    TIMESTAMP,
    response_status INTEGER   NOT NULL,
    response_body   BLOB,
    created_at      TIMESTAMP NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    expires_at      TIMESTAMP NOT NULL,
    version         INTEGER   NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, environment, "key")
);
CREATE INDEX idempotency_records_purge_idx ON idempotency_records (expires_at) WHERE state = 'complete';
