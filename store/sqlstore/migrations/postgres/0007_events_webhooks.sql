-- The event log, merchants' webhook endpoints and their delivery attempts.

-- Append-only. data is the resource's projection (JSON text, kept byte for
-- byte as webhooks send it).
CREATE TABLE events (
    id          TEXT COLLATE "C" NOT NULL,
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    object_id   TEXT COLLATE "C" NOT NULL,
    data        TEXT             NOT NULL,
    created_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (id)
);
CREATE INDEX events_list_idx ON events (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX events_type_list_idx ON events (merchant_id, environment, type, created_at DESC, id DESC);

-- secrets is a JSON array of sealed signing secrets (AES-256-GCM under the
-- account keyring), newest first.
CREATE TABLE webhook_endpoints (
    id              TEXT COLLATE "C" NOT NULL,
    merchant_id     TEXT COLLATE "C" NOT NULL,
    environment     TEXT             NOT NULL,
    url             TEXT             NOT NULL,
    secrets         TEXT             NOT NULL,
    status          TEXT             NOT NULL,
    disabled_reason TEXT             NOT NULL,
    created_at      TIMESTAMPTZ      NOT NULL,
    updated_at      TIMESTAMPTZ      NOT NULL,
    version         BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id)
);
CREATE INDEX webhook_endpoints_merchant_idx ON webhook_endpoints (merchant_id, created_at DESC, id DESC);

-- Append-only.
CREATE TABLE webhook_attempts (
    id          TEXT COLLATE "C" NOT NULL,
    endpoint_id TEXT COLLATE "C" NOT NULL,
    event_id    TEXT COLLATE "C" NOT NULL,
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    number      INTEGER          NOT NULL,
    status_code INTEGER          NOT NULL,
    latency_ms  BIGINT           NOT NULL,
    response    TEXT             NOT NULL,
    error       TEXT             NOT NULL,
    succeeded   BOOLEAN          NOT NULL,
    created_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id)
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, created_at DESC, id DESC);
