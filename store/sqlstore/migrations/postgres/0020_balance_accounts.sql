-- Balances become rows: one per scope, currency and account, so that a new
-- account of the chart (paykit.LookupAccount) needs no new column. Whether
-- an account may go below zero is its rule in the chart, which the Store
-- applies in PostLedger's statement (a guarded debit changes no row when
-- it would overdraw), so the table has no sign check.
ALTER TABLE balances RENAME TO balances_0019;
ALTER INDEX balances_pkey RENAME TO balances_0019_pkey;

CREATE TABLE balances (
    merchant_id TEXT COLLATE "C" NOT NULL,
    environment TEXT             NOT NULL,
    currency    TEXT COLLATE "C" NOT NULL,
    account     TEXT COLLATE "C" NOT NULL,
    amount      BIGINT           NOT NULL,
    updated_at  TIMESTAMPTZ      NOT NULL,
    CONSTRAINT balances_pkey PRIMARY KEY (merchant_id, environment, currency, account)
);

INSERT INTO balances (merchant_id, environment, currency, account, amount, updated_at)
SELECT merchant_id, environment, currency, 'available', available, updated_at FROM balances_0019
UNION ALL
SELECT merchant_id, environment, currency, 'reserved', reserved, updated_at FROM balances_0019;

DROP TABLE balances_0019;
