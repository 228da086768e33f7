-- Reconciliation: the settlement lines read, each batch's read (a run),
-- and the breaks between the Providers' reports and paykit's records.

-- A line is known by its Provider, type and reference, so a batch read
-- again changes nothing and a line settled twice is seen. The key leads
-- with (provider, reference), which also finds the lines of any type
-- that name a reference.
CREATE TABLE paykit_settled_lines (
    provider   TEXT      NOT NULL,
    type       TEXT      NOT NULL,
    reference  TEXT      NOT NULL,
    batch      TEXT      NOT NULL,
    source     TEXT      NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (provider, reference, type)
) WITHOUT ROWID;

CREATE TABLE paykit_reconciliation_runs (
    id          TEXT      NOT NULL PRIMARY KEY,
    provider    TEXT      NOT NULL,
    batch       TEXT      NOT NULL,
    lines       INTEGER   NOT NULL,
    matched     INTEGER   NOT NULL,
    breaks      INTEGER   NOT NULL,
    started_at  TIMESTAMP NOT NULL,
    finished_at TIMESTAMP NOT NULL
);
-- The list, newest first, and a Provider's (its last run too).
CREATE INDEX paykit_reconciliation_runs_list_idx
    ON paykit_reconciliation_runs (started_at DESC, id DESC);
CREATE INDEX paykit_reconciliation_runs_provider_idx
    ON paykit_reconciliation_runs (provider, started_at DESC, id DESC);

-- Expected and reported are each NULL in all three columns when absent.
CREATE TABLE paykit_reconciliation_breaks (
    id                TEXT      NOT NULL PRIMARY KEY,
    type              TEXT      NOT NULL,
    status            TEXT      NOT NULL,
    provider          TEXT      NOT NULL,
    merchant_id       TEXT      NOT NULL,
    environment       TEXT      NOT NULL,
    source            TEXT      NOT NULL,
    line_type         TEXT      NOT NULL,
    reference         TEXT      NOT NULL,
    batch             TEXT      NOT NULL,
    expected_amount   BIGINT,
    expected_fee      BIGINT,
    expected_currency TEXT,
    reported_amount   BIGINT,
    reported_fee      BIGINT,
    reported_currency TEXT,
    resolution        TEXT      NOT NULL,
    note              TEXT      NOT NULL,
    created_at        TIMESTAMP NOT NULL,
    resolved_at       TIMESTAMP,
    version           INTEGER   NOT NULL DEFAULT 0
);
-- The operator's list, newest first, and an index per filter.
CREATE INDEX paykit_reconciliation_breaks_list_idx
    ON paykit_reconciliation_breaks (created_at DESC, id DESC);
CREATE INDEX paykit_reconciliation_breaks_status_list_idx
    ON paykit_reconciliation_breaks (status, created_at DESC, id DESC);
CREATE INDEX paykit_reconciliation_breaks_type_list_idx
    ON paykit_reconciliation_breaks (type, created_at DESC, id DESC);
CREATE INDEX paykit_reconciliation_breaks_merchant_list_idx
    ON paykit_reconciliation_breaks (merchant_id, created_at DESC, id DESC);
CREATE INDEX paykit_reconciliation_breaks_provider_list_idx
    ON paykit_reconciliation_breaks (provider, created_at DESC, id DESC);
-- The open breaks by what a line or an unsettled record looks them up by.
CREATE INDEX paykit_reconciliation_breaks_open_idx
    ON paykit_reconciliation_breaks (provider, type, reference, created_at, id) WHERE status = 'open';
-- Every missing_in_report break, open or resolved, by its reference: a
-- record that had one is not reported missing again.
CREATE INDEX paykit_reconciliation_breaks_missing_idx
    ON paykit_reconciliation_breaks (provider, reference) WHERE type = 'missing_in_report';

-- The succeeded payments and refunds a settlement line has not named yet,
-- oldest first. A payment leaves its index when its funds settle; a
-- refund when a line names it (in_settlement, set as lines are recorded),
-- so that neither index keeps every record ever settled.
ALTER TABLE paykit_refunds ADD COLUMN in_settlement BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX payment_intents_unsettled_idx
    ON payment_intents (provider, completed_at, id) WHERE status = 'succeeded' AND settled_at IS NULL;
CREATE INDEX paykit_refunds_unsettled_idx
    ON paykit_refunds (provider, completed_at, id) WHERE status = 'succeeded' AND NOT in_settlement;
