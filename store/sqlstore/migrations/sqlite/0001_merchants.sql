-- Merchants, their API keys and the operator audit log.

CREATE TABLE merchants (
    id         TEXT      NOT NULL PRIMARY KEY,
    name       TEXT      NOT NULL,
    created_at TIMESTAMP NOT NULL,
    version    INTEGER   NOT NULL DEFAULT 0
);

CREATE TABLE api_keys (
    id           TEXT      NOT NULL PRIMARY KEY,
    merchant_id  TEXT      NOT NULL REFERENCES merchants (id),
    environment  TEXT      NOT NULL,
    public_key   TEXT      NOT NULL,
    secret_hash  TEXT      NOT NULL,
    secret_last4 TEXT      NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    revoked_at   TIMESTAMP,
    version      INTEGER   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX api_keys_public_key_key ON api_keys (public_key);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, created_at DESC, id DESC);

-- Append-only: no version column. merchant_id and environment are empty for
-- platform-wide actions.
CREATE TABLE audit_events (
    id          TEXT      NOT NULL PRIMARY KEY,
    actor       TEXT      NOT NULL,
    action      TEXT      NOT NULL,
    target_type TEXT      NOT NULL,
    target_id   TEXT      NOT NULL,
    merchant_id TEXT      NOT NULL,
    environment TEXT      NOT NULL,
    details     TEXT,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX audit_events_list_idx ON audit_events (created_at DESC, id DESC);
CREATE INDEX audit_events_merchant_idx ON audit_events (merchant_id, created_at DESC, id DESC);
CREATE INDEX audit_events_action_idx ON audit_events (action, created_at DESC, id DESC);
