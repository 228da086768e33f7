-- Hosted checkouts. Each links one payment intent (payment_intent_id);
-- customer, metadata and payment_method_options are JSON text.

CREATE TABLE checkouts (
    id                     TEXT COLLATE "C" NOT NULL,
    merchant_id            TEXT COLLATE "C" NOT NULL,
    environment            TEXT             NOT NULL,
    status                 TEXT             NOT NULL,
    amount                 BIGINT           NOT NULL,
    currency               TEXT             NOT NULL,
    country                TEXT             NOT NULL,
    merchant_reference     TEXT COLLATE "C" NOT NULL,
    payment_intent_id      TEXT COLLATE "C" NOT NULL,
    customer               TEXT,
    metadata               TEXT,
    payment_method         TEXT             NOT NULL,
    payment_method_options TEXT,
    return_url             TEXT             NOT NULL,
    expires_at             TIMESTAMPTZ      NOT NULL,
    created_at             TIMESTAMPTZ      NOT NULL,
    updated_at             TIMESTAMPTZ      NOT NULL,
    version                BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT checkouts_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX checkouts_merchant_reference_key
    ON checkouts (merchant_id, environment, merchant_reference);
CREATE INDEX checkouts_list_idx
    ON checkouts (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX checkouts_status_list_idx
    ON checkouts (merchant_id, environment, status, created_at DESC, id DESC);
