-- Merchants, their API keys and the operator audit log. Identifiers use the
-- "C" collation so that keyset order is byte order on every backend.

CREATE TABLE merchants (
    id         TEXT COLLATE "C" NOT NULL,
    name       TEXT             NOT NULL,
    created_at TIMESTAMPTZ      NOT NULL,
    version    BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT merchants_pkey PRIMARY KEY (id)
);

CREATE TABLE api_keys (
    id           TEXT COLLATE "C" NOT NULL,
    merchant_id  TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
    environment  TEXT             NOT NULL,
    public_key   TEXT COLLATE "C" NOT NULL,
    secret_hash  TEXT             NOT NULL,
    secret_last4 TEXT             NOT NULL,
    created_at   TIMESTAMPTZ      NOT NULL,
    revoked_at   TIMESTAMPTZ,
    version      BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX api_keys_public_key_key ON api_keys (public_key);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, created_at DESC, id DESC);

-- Append-only: no version column. merchant_id and environment are empty for
-- platform-wide actions.
CREATE TABLE audit_events (
    id          TEXT COLLATE "C" NOT NULL,
    actor       TEXT             NOT NULL,
    action      TEXT COLLATE "C" NOT NULL,
    target_type TEXT             NOT NULL,
    target_id   TEXT             NOT NULL,
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    details     TEXT,
    created_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT audit_events_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_events_list_idx ON audit_events (created_at DESC, id DESC);
CREATE INDEX audit_events_merchant_idx ON audit_events (merchant_id, created_at DESC, id DESC);
CREATE INDEX audit_events_action_idx ON audit_events (action, created_at DESC, id DESC);
