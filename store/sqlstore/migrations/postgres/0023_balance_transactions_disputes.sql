-- The movements of a merchant's money (balance transactions), the disputes
-- of its payments, and what each payment intent holds of both: the
-- Provider's fee, when its net was settled, and its disputes.

CREATE TABLE paykit_balance_transactions (
    id           TEXT COLLATE "C" NOT NULL,
    merchant_id  TEXT COLLATE "C" NOT NULL,
    environment  TEXT             NOT NULL,
    type         TEXT             NOT NULL,
    source       TEXT COLLATE "C" NOT NULL,
    amount       BIGINT           NOT NULL,
    fee          BIGINT           NOT NULL,
    net          BIGINT           NOT NULL,
    currency     TEXT             NOT NULL,
    status       TEXT             NOT NULL,
    available_on TIMESTAMPTZ      NOT NULL,
    created_at   TIMESTAMPTZ      NOT NULL,
    updated_at   TIMESTAMPTZ      NOT NULL,
    version      BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT paykit_balance_transactions_pkey PRIMARY KEY (id)
);
-- The list, and an index per filter led by the scope, then the filter,
-- then the list order (see 0017).
CREATE INDEX paykit_balance_transactions_list_idx
    ON paykit_balance_transactions (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX paykit_balance_transactions_type_list_idx
    ON paykit_balance_transactions (merchant_id, environment, type, created_at DESC, id DESC);
CREATE INDEX paykit_balance_transactions_status_list_idx
    ON paykit_balance_transactions (merchant_id, environment, status, created_at DESC, id DESC);
CREATE INDEX paykit_balance_transactions_currency_list_idx
    ON paykit_balance_transactions (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX paykit_balance_transactions_source_idx
    ON paykit_balance_transactions (merchant_id, environment, source, created_at DESC, id DESC);
CREATE STATISTICS paykit_balance_transactions_filter_stats (mcv)
    ON merchant_id, environment, type, status, currency FROM paykit_balance_transactions;

CREATE TABLE paykit_disputes (
    id                    TEXT COLLATE "C" NOT NULL,
    merchant_id           TEXT COLLATE "C" NOT NULL,
    environment           TEXT             NOT NULL,
    payment_intent_id     TEXT COLLATE "C" NOT NULL,
    amount                BIGINT           NOT NULL,
    currency              TEXT             NOT NULL,
    fee                   BIGINT           NOT NULL,
    reason                TEXT             NOT NULL,
    status                TEXT             NOT NULL,
    evidence              TEXT             NOT NULL,
    evidence_submitted_at TIMESTAMPTZ,
    evidence_due_by       TIMESTAMPTZ      NOT NULL,
    provider              TEXT             NOT NULL,
    provider_ref          TEXT             NOT NULL,
    closed_at             TIMESTAMPTZ,
    created_at            TIMESTAMPTZ      NOT NULL,
    updated_at            TIMESTAMPTZ      NOT NULL,
    version               BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT paykit_disputes_pkey PRIMARY KEY (id)
);
-- A Provider's id of a dispute names one dispute, of whatever scope; a
-- dispute the Provider has not named yet has none.
CREATE UNIQUE INDEX paykit_disputes_provider_ref_key
    ON paykit_disputes (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX paykit_disputes_list_idx
    ON paykit_disputes (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX paykit_disputes_status_list_idx
    ON paykit_disputes (merchant_id, environment, status, created_at DESC, id DESC);
CREATE INDEX paykit_disputes_currency_list_idx
    ON paykit_disputes (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX paykit_disputes_payment_intent_idx
    ON paykit_disputes (merchant_id, environment, payment_intent_id, created_at DESC, id DESC);
CREATE STATISTICS paykit_disputes_filter_stats (mcv)
    ON merchant_id, environment, status, currency FROM paykit_disputes;

ALTER TABLE payment_intents ADD COLUMN fee BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payment_intents ADD COLUMN settled_at TIMESTAMPTZ;
ALTER TABLE payment_intents ADD COLUMN disputed_amount BIGINT NOT NULL DEFAULT 0;
ALTER TABLE payment_intents ADD COLUMN open_disputes INTEGER NOT NULL DEFAULT 0;
