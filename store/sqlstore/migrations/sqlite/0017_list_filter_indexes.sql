-- List filters that no index held (currency, country) read the scope's
-- list index and filtered every row: a value the merchant never has walked
-- its whole history. Each filter gets an index led by the scope, then the
-- filter, then the list order, so a page reads only matching rows in order.

CREATE INDEX payment_intents_currency_list_idx
    ON payment_intents (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX payment_intents_country_list_idx
    ON payment_intents (merchant_id, environment, country, created_at DESC, id DESC);
CREATE INDEX payout_intents_currency_list_idx
    ON payout_intents (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX payout_intents_country_list_idx
    ON payout_intents (merchant_id, environment, country, created_at DESC, id DESC);
CREATE INDEX checkouts_currency_list_idx
    ON checkouts (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX checkouts_country_list_idx
    ON checkouts (merchant_id, environment, country, created_at DESC, id DESC);
CREATE INDEX paykit_refunds_currency_list_idx
    ON paykit_refunds (merchant_id, environment, currency, created_at DESC, id DESC);
