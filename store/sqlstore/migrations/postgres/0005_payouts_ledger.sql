-- Payout intents, the double-entry ledger and the balances it implies.

-- The recipient's account number is stored only encrypted: account_ciphertext
-- is AES-256-GCM (nonce || ciphertext) under the key account_key_id names;
-- account_last4 is what projections show.
CREATE TABLE payout_intents (
    id                  TEXT COLLATE "C" NOT NULL,
    merchant_id         TEXT COLLATE "C" NOT NULL,
    environment         TEXT             NOT NULL,
    status              TEXT             NOT NULL,
    approval_pending    BOOLEAN          NOT NULL,
    amount              BIGINT           NOT NULL,
    currency            TEXT             NOT NULL,
    country             TEXT             NOT NULL,
    merchant_reference  TEXT COLLATE "C" NOT NULL,
    recipient_type      TEXT             NOT NULL,
    bank_code           TEXT             NOT NULL,
    holder_name         TEXT             NOT NULL,
    holder_name_th      TEXT             NOT NULL,
    account_last4       TEXT             NOT NULL,
    account_ciphertext  BYTEA,
    account_key_id      TEXT             NOT NULL,
    reserved_amount     BIGINT           NOT NULL,
    completed_amount    BIGINT           NOT NULL,
    returned_amount     BIGINT           NOT NULL,
    failure_code        TEXT             NOT NULL,
    failure_message     TEXT             NOT NULL,
    cancel_reason       TEXT             NOT NULL,
    provider            TEXT             NOT NULL,
    provider_ref        TEXT             NOT NULL,
    dispatch            TEXT             NOT NULL,
    cancel_requested_at TIMESTAMPTZ,
    approval_expires_at TIMESTAMPTZ,
    created_at          TIMESTAMPTZ      NOT NULL,
    updated_at          TIMESTAMPTZ      NOT NULL,
    version             BIGINT           NOT NULL DEFAULT 0,
    CONSTRAINT payout_intents_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX payout_intents_merchant_reference_key
    ON payout_intents (merchant_id, environment, merchant_reference);
CREATE INDEX payout_intents_list_idx
    ON payout_intents (merchant_id, environment, created_at DESC, id DESC);
CREATE INDEX payout_intents_status_list_idx
    ON payout_intents (merchant_id, environment, status, created_at DESC, id DESC);
-- Operator lists across tenants: every payout, and the approval queue.
CREATE INDEX payout_intents_all_list_idx
    ON payout_intents (created_at DESC, id DESC);
CREATE INDEX payout_intents_approval_list_idx
    ON payout_intents (created_at DESC, id DESC) WHERE approval_pending;

-- One immutable row per posting: amount (signed minor units) into account.
-- The rows of a transaction share txn_id, scope, currency, kind, ref_id and
-- created_at, have ids txn_id || '.' || n, and sum to zero.
CREATE TABLE ledger_entries (
    id          TEXT COLLATE "C" NOT NULL,
    txn_id      TEXT COLLATE "C" NOT NULL,
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    currency    TEXT             NOT NULL,
    account     TEXT             NOT NULL,
    amount      BIGINT           NOT NULL CHECK (amount <> 0),
    kind        TEXT             NOT NULL,
    ref_id      TEXT COLLATE "C" NOT NULL,
    created_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT ledger_entries_pkey PRIMARY KEY (id)
);
CREATE INDEX ledger_entries_scope_idx
    ON ledger_entries (merchant_id, environment, currency, created_at, id);
CREATE INDEX ledger_entries_ref_idx ON ledger_entries (ref_id, created_at, id);
CREATE FUNCTION paykit_ledger_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'paykit: ledger entries are immutable'; END $$;
CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION paykit_ledger_entries_immutable();

-- The merchant accounts of a scope and currency: the sums of the entries to
-- "available" and "reserved", kept in the transaction that writes them.
-- External accounts have no row; their sums are read from the entries.
CREATE TABLE balances (
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    currency    TEXT COLLATE "C" NOT NULL,
    available   BIGINT           NOT NULL CHECK (available >= 0),
    reserved    BIGINT           NOT NULL CHECK (reserved >= 0),
    updated_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT balances_pkey PRIMARY KEY (merchant_id, environment, currency)
);
