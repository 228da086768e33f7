-- A payment intent's options as its Provider takes them (bank codes mapped
-- by the route), frozen when the attempt starts: a later route edit never
-- reaches an attempt in flight. NULL on intents stored before.

ALTER TABLE payment_intents ADD COLUMN provider_options TEXT;
