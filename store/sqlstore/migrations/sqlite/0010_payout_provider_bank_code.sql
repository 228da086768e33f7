-- The route's Provider code of a payout's bank, frozen at create; empty on
-- payouts stored before it was recorded.

ALTER TABLE payout_intents ADD COLUMN provider_bank_code TEXT NOT NULL DEFAULT '';
