-- One row per service instance, rewritten by every health check: a write
-- that proves the database accepts writes.

CREATE TABLE paykit_heartbeats (
    instance TEXT      NOT NULL PRIMARY KEY,
    beat_at  TIMESTAMP NOT NULL
);
