-- The W3C traceparent of the span that enqueued a job (NULL when none was
-- sampled): each run's span links to it.

ALTER TABLE jobs ADD COLUMN trace_parent TEXT;
