package sqlstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

type keyCheckRow struct {
	bun.BaseModel `bun:"table:paykit_key_checks"`
	KeyID         string    `bun:"key_id,pk"`
	Fingerprint   string    `bun:"fingerprint"`
	CreatedAt     time.Time `bun:"created_at"`
}

// RecordKeyChecks inserts the fingerprints of key ids that have none in
// paykit_key_checks and returns all of them. It writes only when a key id
// is new, so a restart with known keys works on a read-only database too.
func (s *Store) RecordKeyChecks(ctx context.Context, checks map[string]string, now time.Time) (map[string]string, error) {
	stored, err := s.keyChecks(ctx)
	if err != nil {
		return nil, err
	}
	var rows []keyCheckRow
	for id, fp := range checks {
		if _, ok := stored[id]; !ok {
			rows = append(rows, keyCheckRow{KeyID: id, Fingerprint: fp, CreatedAt: now.UTC()})
		}
	}
	if len(rows) == 0 {
		return stored, nil
	}
	if _, err := s.db.NewInsert().Model(&rows).On("CONFLICT (key_id) DO NOTHING").Exec(ctx); err != nil {
		return nil, mapError("record key checks", err)
	}
	return s.keyChecks(ctx)
}

// keyChecks reads paykit_key_checks.
func (s *Store) keyChecks(ctx context.Context) (map[string]string, error) {
	var rows []keyCheckRow
	if err := s.db.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return nil, mapError("record key checks", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.KeyID] = r.Fingerprint
	}
	return out, nil
}

// SchemaVersion is the number of the newest migration the database has
// applied (Migrate must have run).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.NewRaw("SELECT COALESCE(MAX(version), 0) FROM "+migrationsTable).Scan(ctx, &v)
	return v, mapError("schema version", err)
}

// Postgres reports whether the database is PostgreSQL (else SQLite).
func (s *Store) Postgres() bool { return s.pg }
