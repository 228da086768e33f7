package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/paykit/paykit"
)

// entities names the ConflictError.Entity of each table.
var entities = map[string]string{
	"merchants":                    "merchant",
	"api_keys":                     "api_key",
	"audit_events":                 "audit_event",
	"payment_intents":              "payment_intent",
	"payout_intents":               "payout_intent",
	"checkouts":                    "checkout",
	"paykit_refunds":               "refund",
	"paykit_balance_transactions":  "balance_transaction",
	"paykit_disputes":              "dispute",
	"paykit_reconciliation_runs":   "reconciliation_run",
	"paykit_reconciliation_breaks": "reconciliation_break",
	"idempotency_records":          "idempotency_record",
	"jobs":                         "job",
	"events":                       "event",
	"webhook_endpoints":            "webhook_endpoint",
	"webhook_attempts":             "webhook_attempt",
}

// pgUniqueKeys names the ConflictError.Key of each PostgreSQL unique
// constraint or index. (SQLite reports columns instead: the key is the last
// column of the violated index, which these names follow too.)
var pgUniqueKeys = map[string]string{
	"merchants_pkey":                         "id",
	"api_keys_pkey":                          "id",
	"api_keys_public_key_key":                "public_key",
	"audit_events_pkey":                      "id",
	"payment_intents_pkey":                   "id",
	"payment_intents_merchant_reference_key": "merchant_reference",
	"payout_intents_pkey":                    "id",
	"payout_intents_merchant_reference_key":  "merchant_reference",
	"checkouts_pkey":                         "id",
	"checkouts_merchant_reference_key":       "merchant_reference",
	"paykit_refunds_pkey":                    "id",
	"paykit_refunds_merchant_reference_key":  "merchant_reference",
	"paykit_balance_transactions_pkey":       "id",
	"paykit_disputes_pkey":                   "id",
	"paykit_disputes_provider_ref_key":       "provider_ref",
	"paykit_reconciliation_runs_pkey":        "id",
	"paykit_reconciliation_breaks_pkey":      "id",
	"idempotency_records_pkey":               "key",
	"jobs_pkey":                              "id",
	"jobs_dedup_key_key":                     "dedup_key",
}

// SQLite result codes (https://sqlite.org/rescode.html); extended codes
// carry the primary code in the low byte.
const (
	sqliteBusy             = 5
	sqliteLocked           = 6
	sqliteReadOnly         = 8
	sqliteConstraintPK     = 1555
	sqliteConstraintUnique = 2067
)

// pgError is the error of github.com/uptrace/bun/driver/pgdriver, for hosts
// that pass New a bun.DB on that driver.
type pgError interface {
	error
	Field(k byte) string
}

// mapError turns driver errors into the Store's sentinels: unique violations
// into *paykit.ConflictError, deadlocks and serialization failures into
// paykit.ErrVersionConflict (the caller retries), overload (too many
// clients, SQLite busy past busy_timeout, an unreachable or read-only
// server) into
// paykit.ErrUnavailable, no rows into paykit.ErrNotFound. Anything else is
// wrapped with op.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return paykit.ErrNotFound
	}
	if errors.Is(err, paykit.ErrUnavailable) {
		return err
	}
	retry, unique, overload := false, false, false
	var table, key string
	var pe *pgconn.PgError
	var pde pgError
	var se *sqlite.Error
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &pe):
		retry = pe.Code == "40001" || pe.Code == "40P01" // serialization_failure, deadlock_detected
		unique = pe.Code == "23505"
		overload = pgOverload(pe.Code)
		table, key = pe.TableName, pgUniqueKeys[pe.ConstraintName]
	case errors.As(err, &pde) && pde.Field('C') != "":
		code := pde.Field('C')
		retry = code == "40001" || code == "40P01"
		unique = code == "23505"
		overload = pgOverload(code)
		table, key = pde.Field('t'), pgUniqueKeys[pde.Field('n')]
	case errors.As(err, &se):
		c := se.Code()
		// The busy handler already waited busy_timeout for the write lock.
		overload = c&0xff == sqliteBusy || c&0xff == sqliteReadOnly
		retry = c&0xff == sqliteLocked
		unique = c == sqliteConstraintPK || c == sqliteConstraintUnique
		table, key = sqliteUniqueColumn(se.Error())
	case errors.As(err, &ce):
		overload = true // the server refused or could not be reached
	}
	switch {
	case overload:
		return fmt.Errorf("%w (%s: %v)", paykit.ErrUnavailable, op, err)
	case retry:
		return fmt.Errorf("%w (%s: %v)", paykit.ErrVersionConflict, op, err)
	case unique && entities[table] != "" && key != "":
		return &paykit.ConflictError{Entity: entities[table], Key: key}
	case unique:
		return fmt.Errorf("%w (%s: %v)", paykit.ErrAlreadyExists, op, err)
	}
	return fmt.Errorf("sqlstore: %s: %w", op, err)
}

// pgOverload reports whether a PostgreSQL SQLSTATE means the server cannot
// take this work now: class 53 (insufficient resources, among them 53300
// too_many_connections), class 08 (connection exception), 57P01-57P03
// (the session was ended by an administrator or a crash, or the server is
// starting up) and 25006 (read_only_sql_transaction: a standby, or a
// database set read-only).
func pgOverload(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "25006":
		return true
	}
	return strings.HasPrefix(code, "53") || strings.HasPrefix(code, "08")
}

// sqliteUniqueColumn reads the table and the last column from SQLite's
// message "... UNIQUE constraint failed: t.a, t.b (2067)".
func sqliteUniqueColumn(msg string) (table, column string) {
	const marker = "UNIQUE constraint failed: "
	i := strings.Index(msg, marker)
	if i < 0 {
		return "", ""
	}
	cols := msg[i+len(marker):]
	if j := strings.Index(cols, " ("); j >= 0 {
		cols = cols[:j]
	}
	if j := strings.LastIndex(cols, ", "); j >= 0 {
		cols = cols[j+2:]
	}
	table, column, _ = strings.Cut(strings.TrimSpace(cols), ".")
	return table, column
}
