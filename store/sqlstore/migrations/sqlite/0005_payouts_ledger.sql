-- Payout intents, the double-entry ledger and the balances it implies.

-- The recipient's account number is stored only encrypted: account_ciphertext
-- is AES-256-GCM (nonce || ciphertext) under the key account_key_id names;
-- account_last4 is what projections show.
CREATE TABLE payout_intents (
    id                  TEXT      NOT NULL PRIMARY KEY,
    merchant_id         TEXT      NOT NULL,
    environment         TEXT      NOT NULL,
    status              TEXT      NOT NULL,
    approval_pending    BOOLEAN   NOT NULL,
    amount              BIGINT    NOT NULL,
    currency            TEXT      NOT NULL,
    country             TEXT      NOT NULL,
    merchant_reference  TEXT      NOT NULL,
    recipient_type      TEXT      NOT NULL,
    bank_code           TEXT      NOT NULL,
    holder_name         TEXT      NOT NULL,
    holder_name_th      TEXT      NOT NULL,
    account_last4       TEXT      NOT NULL,
    account_ciphertext  BLOB,
    account_key_id      TEXT      NOT NULL,
    reserved_amount     BIGINT    NOT NULL,
    completed_amount    BIGINT    NOT NULL,
    returned_amount     BIGINT    NOT NULL,
    failure_code        TEXT      NOT NULL,
    failure_message     TEXT      NOT NULL,
    cancel_reason       TEXT      NOT NULL,
    provider            TEXT      NOT NULL,
    provider_ref        TEXT      NOT NULL,
    dispatch            TEXT      NOT NULL,
    cancel_requested_at TIMESTAMP,
    approval_expires_at TIMESTAMP,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    version             INTEGER   NOT NULL DEFAULT 0
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
    id          TEXT      NOT NULL PRIMARY KEY,
    txn_id      TEXT      NOT NULL,
    merchant_id TEXT      NOT NULL,
    environment TEXT      NOT NULL,
    currency    TEXT      NOT NULL,
    account     TEXT      NOT NULL,
    amount      BIGINT    NOT NULL CHECK (amount <> 0),
    kind        TEXT      NOT NULL,
    ref_id      TEXT      NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX ledger_entries_scope_idx
    ON ledger_entries (merchant_id, environment, currency, created_at, id);
CREATE INDEX ledger_entries_ref_idx ON ledger_entries (ref_id, created_at, id);
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries BEGIN SELECT RAISE(ABORT, 'paykit: ledger entries are immutable'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries BEGIN SELECT RAISE(ABORT, 'paykit: ledger entries are immutable'); END;

-- The merchant accounts of a scope and currency: the sums of the entries to
-- "available" and "reserved", kept in the transaction that writes them.
-- External accounts have no row; their sums are read from the entries.
-- SQLite turns an overflowing integer sum into a REAL: the typeof checks
-- refuse it.
CREATE TABLE balances (
    merchant_id TEXT      NOT NULL,
    environment TEXT      NOT NULL,
    currency    TEXT      NOT NULL,
    available   BIGINT    NOT NULL CHECK (typeof(available) = 'integer' AND available >= 0),
    reserved    BIGINT    NOT NULL CHECK (typeof(reserved) = 'integer' AND reserved >= 0),
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (merchant_id, environment, currency)
);
