-- One vocabulary for a Provider attempt: payouts and refunds keep where
-- theirs stands in the column payments call attempt, with the same values
-- (creating, open, unknown, cancelling, closed).
ALTER TABLE payout_intents RENAME COLUMN dispatch TO attempt;
ALTER TABLE paykit_refunds RENAME COLUMN dispatch TO attempt;

-- A callback (or a settlement line) names an attempt by the Provider's id:
-- each resource with a Provider attempt is found by it in one lookup.
CREATE INDEX payment_intents_provider_ref_idx ON payment_intents (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX payout_intents_provider_ref_idx ON payout_intents (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX paykit_refunds_provider_ref_idx ON paykit_refunds (provider, provider_ref) WHERE provider_ref <> '';
