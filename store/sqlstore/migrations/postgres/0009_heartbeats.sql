-- One row per service instance, rewritten by every health check: a write
-- that proves the database accepts writes.

CREATE TABLE paykit_heartbeats (
    instance TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    beat_at  TIMESTAMPTZ      NOT NULL
);
