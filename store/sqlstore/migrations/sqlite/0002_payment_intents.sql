-- Payment intents. Amounts are minor units; customer, payment_method_options,
-- next_action and receipt are JSON text.

CREATE TABLE payment_intents (
    id                     TEXT      NOT NULL PRIMARY KEY,
    merchant_id            TEXT      NOT NULL,
    environment            TEXT      NOT NULL,
    status                 TEXT      NOT NULL,
    amount                 BIGINT    NOT NULL,
    currency               TEXT      NOT NULL,
    country                TEXT      NOT NULL,
    merchant_reference     TEXT      NOT NULL,
    payment_method         TEXT      NOT NULL,
    customer               TEXT,
    payment_method_options TEXT,
    return_url             TEXT      NOT NULL,
    checkout_id            TEXT      NOT NULL,
    next_action            TEXT,
    failure_code           TEXT      NOT NULL,
    receipt                TEXT,
    provider               TEXT      NOT NULL,
    provider_ref           TEXT      NOT NULL,
    attempt                TEXT      NOT NULL,
    provider_url           TEXT      NOT NULL,
    cancel_requested_at    TIMESTAMP,
    expires_at             TIMESTAMP NOT NULL,
    completed_at           TIMESTAMP,
    created_at             TIMESTAMP NOT NULL,
    updated_at             TIMESTAMP NOT NULL,
    version                INTEGER   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX payment_intents_merchant_reference_key
    ON payment_intents (merchant_id, environment, merchant_reference);
CREATE INDEX payment_intents_list_idx
    ON payment_intents (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX payment_intents_status_list_idx
    ON payment_intents (merchant_id, environment, status, created_at DESC, id DESC);
