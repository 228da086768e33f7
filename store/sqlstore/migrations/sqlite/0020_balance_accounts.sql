-- Balances become rows: one per scope, currency and account, so that a new
-- account of the chart (paykit.LookupAccount) needs no new column. Whether
-- an account may go below zero is its rule in the chart, which the Store
-- applies in PostLedger's statement (a guarded debit changes no row when
-- it would overdraw), so the table has no sign check. SQLite turns an
-- overflowing integer sum into a REAL: the typeof check refuses it.
ALTER TABLE balances RENAME TO balances_0019;

CREATE TABLE balances (
    merchant_id TEXT      NOT NULL,
    environment TEXT      NOT NULL,
    currency    TEXT      NOT NULL,
    account     TEXT      NOT NULL,
    amount      BIGINT    NOT NULL CHECK (typeof(amount) = 'integer'),
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (merchant_id, environment, currency, account)
);

INSERT INTO balances (merchant_id, environment, currency, account, amount, updated_at)
SELECT merchant_id, environment, currency, 'available', available, updated_at FROM balances_0019
UNION ALL
SELECT merchant_id, environment, currency, 'reserved', reserved, updated_at FROM balances_0019;

DROP TABLE balances_0019;
