-- Refunds of succeeded payment intents, and what each payment intent has
-- refunded (succeeded refunds) and holds reserved for refunds in flight
-- (pending refunds): refundable is amount minus both.

CREATE TABLE paykit_refunds (
    id                 TEXT      NOT NULL PRIMARY KEY,
    merchant_id        TEXT      NOT NULL,
    environment        TEXT      NOT NULL,
    payment_intent_id  TEXT      NOT NULL,
    amount             BIGINT    NOT NULL,
    currency           TEXT      NOT NULL,
    status             TEXT      NOT NULL,
    reason             TEXT      NOT NULL,
    merchant_reference TEXT      NOT NULL,
    failure_code       TEXT      NOT NULL,
    provider           TEXT      NOT NULL,
    provider_ref       TEXT      NOT NULL,
    dispatch           TEXT      NOT NULL,
    completed_at       TIMESTAMP,
    created_at         TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    version            INTEGER   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX paykit_refunds_merchant_reference_key
    ON paykit_refunds (merchant_id, environment, merchant_reference);
CREATE INDEX paykit_refunds_list_idx
    ON paykit_refunds (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX paykit_refunds_status_list_idx
    ON paykit_refunds (merchant_id, environment, status, created_at DESC, id DESC);
-- The refunds of one payment intent, newest first.
CREATE INDEX paykit_refunds_payment_intent_idx
    ON paykit_refunds (merchant_id, environment, payment_intent_id, created_at DESC, id DESC);

ALTER TABLE payment_intents ADD COLUMN refunded_amount BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payment_intents ADD COLUMN refund_pending_amount BIGINT NOT NULL DEFAULT 0;
