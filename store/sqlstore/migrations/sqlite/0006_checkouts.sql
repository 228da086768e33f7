-- Hosted checkouts. Each links one payment intent (payment_intent_id);
-- customer, metadata and payment_method_options are JSON text.

CREATE TABLE checkouts (
    id                     TEXT      NOT NULL PRIMARY KEY,
    merchant_id            TEXT      NOT NULL,
    environment            TEXT      NOT NULL,
    status                 TEXT      NOT NULL,
    amount                 BIGINT    NOT NULL,
    currency               TEXT      NOT NULL,
    country                TEXT      NOT NULL,
    merchant_reference     TEXT      NOT NULL,
    payment_intent_id      TEXT      NOT NULL,
    customer               TEXT,
    metadata               TEXT,
    payment_method         TEXT      NOT NULL,
    payment_method_options TEXT,
    return_url             TEXT      NOT NULL,
    expires_at             TIMESTAMP NOT NULL,
    created_at             TIMESTAMP NOT NULL,
    updated_at             TIMESTAMP NOT NULL,
    version                INTEGER   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX checkouts_merchant_reference_key
    ON checkouts (merchant_id, environment, merchant_reference);
CREATE INDEX checkouts_list_idx
    ON checkouts (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX checkouts_status_list_idx
    ON checkouts (merchant_id, environment, status, created_at DESC, id DESC);
