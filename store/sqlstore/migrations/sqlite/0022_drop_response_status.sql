-- An idempotency record's answer is a snapshot in response_body, its kind
-- included; response_status held the HTTP status of a format never
-- released.

ALTER TABLE idempotency_records DROP COLUMN response_status;
