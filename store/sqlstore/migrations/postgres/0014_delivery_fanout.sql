-- The webhook fan-out of an event as a function: one job per enabled
-- endpoint of the event's merchant and environment (ids base.1, base.2, …
-- in endpoint id order), none for an endpoint with the delivery pending.
-- The same statement sent as SQL is parsed and planned on every event,
-- endpoints or none; PL/pgSQL keeps its plan for the session.

CREATE FUNCTION paykit_schedule_deliveries(p_base_id TEXT, p_kind TEXT, p_event_id TEXT,
    p_run_at TIMESTAMPTZ, p_created_at TIMESTAMPTZ, p_state TEXT,
    p_merchant_id TEXT, p_environment TEXT, p_enabled TEXT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO jobs (id, kind, merchant_id, environment, target_id, payload, dedup_key, run_at,
        attempts, lease_owner, last_error, created_at, version, state)
    SELECT p_base_id || '.' || row_number() OVER (ORDER BY e.id), p_kind, e.merchant_id, e.environment, p_event_id,
        convert_to('{"endpoint_id":"' || e.id || '"}', 'UTF8'),
        p_kind || ':' || e.id || ':' || p_event_id, p_run_at, 0, '', '', p_created_at, 0, p_state
    FROM webhook_endpoints e WHERE e.merchant_id = p_merchant_id AND e.environment = p_environment AND e.status = p_enabled
    ON CONFLICT DO NOTHING;
END
$$;
