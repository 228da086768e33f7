-- A fingerprint of each key a Service was configured with (an HMAC of a
-- fixed label under the key, not the key), so that a start with keys that
-- cannot read the stored data fails (paykit.New).

CREATE TABLE paykit_key_checks (
    key_id      TEXT NOT NULL PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
