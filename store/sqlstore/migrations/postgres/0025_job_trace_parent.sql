-- The W3C traceparent of the span that enqueued a job (NULL when none was
-- sampled): each run's span links to it. The fan-out gives an event's
-- deliveries the traceparent of the span that made the event.

ALTER TABLE jobs ADD COLUMN trace_parent TEXT;

DROP FUNCTION paykit_schedule_deliveries(TEXT, TEXT, TEXT, TIMESTAMPTZ, TIMESTAMPTZ, TEXT, TEXT, TEXT, TEXT, TEXT);

CREATE FUNCTION paykit_schedule_deliveries(p_base_id TEXT, p_kind TEXT, p_event_id TEXT,
    p_run_at TIMESTAMPTZ, p_created_at TIMESTAMPTZ, p_state TEXT,
    p_merchant_id TEXT, p_environment TEXT, p_enabled TEXT, p_type TEXT, p_trace_parent TEXT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO jobs (id, kind, merchant_id, environment, target_id, payload, dedup_key, run_at,
        attempts, lease_owner, last_error, created_at, version, state, priority, partition_key, trace_parent)
    SELECT p_base_id || '.' || row_number() OVER (ORDER BY e.id), p_kind, e.merchant_id, e.environment, p_event_id,
        convert_to('{"endpoint_id":"' || e.id || '"}', 'UTF8'),
        p_kind || ':' || e.id || ':' || p_event_id, GREATEST(p_run_at, COALESCE(e.paused_until, p_run_at)),
        0, '', '', p_created_at, 0, p_state, 1, e.id, p_trace_parent
    FROM webhook_endpoints e WHERE e.merchant_id = p_merchant_id AND e.environment = p_environment AND e.status = p_enabled
        AND (strpos(e.enabled_events, '"*"') > 0 OR strpos(e.enabled_events, '"' || p_type || '"') > 0)
    ON CONFLICT DO NOTHING;
END
$$;
