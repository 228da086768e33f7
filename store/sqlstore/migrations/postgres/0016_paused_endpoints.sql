-- The endpoints paused now, counted for a gauge: few rows have a pause
-- (a delivery that succeeds clears it), so the index holds only those.

CREATE INDEX webhook_endpoints_paused_idx ON webhook_endpoints (paused_until) WHERE paused_until IS NOT NULL;
