-- The operator's merchant list and view of background work: keyset lists of
-- merchants and jobs (newest first, optionally by merchant or kind), and
-- the counts of intents processing past their stale time, which read only
-- the processing rows.

CREATE INDEX merchants_list_idx ON merchants (created_at DESC, id DESC);
CREATE INDEX jobs_list_idx ON jobs (created_at DESC, id DESC);
CREATE INDEX jobs_merchant_list_idx ON jobs (merchant_id, created_at DESC, id DESC);
CREATE INDEX jobs_kind_list_idx ON jobs (kind, created_at DESC, id DESC);
CREATE INDEX payment_intents_processing_idx ON payment_intents (updated_at) WHERE status = 'processing';
CREATE INDEX payout_intents_processing_idx ON payout_intents (updated_at) WHERE status = 'processing';
