-- Merchant-managed webhook endpoints: the event types an endpoint takes
-- (a JSON array of types, or ["*"] for all), a description, and when the
-- merchant deleted it (a deleted endpoint is disabled and kept for
-- operators). The previous secret of a rotation and its expiry live in
-- secrets already.

ALTER TABLE webhook_endpoints ADD COLUMN enabled_events TEXT NOT NULL DEFAULT '["*"]';
ALTER TABLE webhook_endpoints ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN deleted_at TIMESTAMP;
