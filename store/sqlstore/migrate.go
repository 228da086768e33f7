package sqlstore

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
)

// migrationFiles holds the schema, one directory per dialect with the same
// file names: NNNN_area.sql, applied in NNNN order. A change to the schema
// is a new file in both directories; applied files are never edited.
//
//go:embed migrations
var migrationFiles embed.FS

// migrationsTable records the applied migrations.
const migrationsTable = "paykit_schema_migrations"

// migrateLockID is the PostgreSQL advisory lock that serializes Migrate
// calls of several processes.
const migrateLockID = 0x7061796b6974 // "paykit"

type migration struct {
	version int
	name    string
	sql     string
}

// Migrate brings the schema up to date: it applies, in order, each embedded
// migration the database has not recorded yet, each in its own transaction
// together with its record. It is safe to call at every start and from
// several processes at once.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := s.migrations()
	if err != nil {
		return err
	}
	// Up to date (every start but the first after an upgrade): one read,
	// no lock. Otherwise each missing migration is applied under the lock,
	// which checks again.
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return err
	}
	ms = slices.DeleteFunc(ms, func(m migration) bool { return applied[m.version] })
	for _, m := range ms {
		if err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return s.apply(ctx, tx, m) }); err != nil {
			return fmt.Errorf("sqlstore: migration %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

// appliedMigrations reads the versions the database has recorded; none
// when it has no migrations table yet.
func (s *Store) appliedMigrations(ctx context.Context) (map[int]bool, error) {
	exists := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if s.pg {
		exists = "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = ? AND schemaname = current_schema()"
	}
	var n int
	if err := s.db.QueryRowContext(ctx, exists, migrationsTable).Scan(&n); err != nil || n == 0 {
		return nil, err
	}
	var versions []int
	if err := s.db.NewSelect().Table(migrationsTable).Column("version").Scan(ctx, &versions); err != nil {
		return nil, err
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// SchemaDigest identifies the migrations of this build (both dialects):
// two builds with the same digest create the same schema. Test helpers key
// databases migrated once and copied per test by it.
func SchemaDigest() string {
	h := sha256.New()
	err := fs.WalkDir(migrationFiles, "migrations", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := migrationFiles.ReadFile(p)
		fmt.Fprintf(h, "%s\n%d\n", p, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		panic(err) // the embedded files are readable
	}
	return hex.EncodeToString(h.Sum(nil))
}

// apply runs m in tx unless the database already recorded it.
func (s *Store) apply(ctx context.Context, tx bun.Tx, m migration) error {
	timestamp := "TIMESTAMP"
	if s.pg {
		// Held until commit: a concurrent Migrate waits here, then finds
		// the migration recorded.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", migrateLockID); err != nil {
			return err
		}
		timestamp = "TIMESTAMPTZ"
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+migrationsTable+` (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at `+timestamp+` NOT NULL DEFAULT CURRENT_TIMESTAMP)`); err != nil {
		return err
	}
	done, err := tx.NewSelect().Table(migrationsTable).Where("version = ?", m.version).Exists(ctx)
	if err != nil || done {
		return err
	}
	for _, stmt := range statements(m.sql) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO "+migrationsTable+" (version, name) VALUES (?, ?)", m.version, m.name)
	return err
}

// migrations reads the embedded migrations of the Store's dialect.
func (s *Store) migrations() ([]migration, error) {
	dir := "migrations/sqlite"
	if s.pg {
		dir = "migrations/postgres"
	}
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("sqlstore: migration file %s is not NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("sqlstore: two migrations numbered %04d", ms[i].version)
		}
	}
	return ms, nil
}

// statements splits a migration file at semicolons that end a line,
// but for those inside a $$-quoted body (a function's). The files keep
// semicolons out of comments and literals.
func statements(sql string) []string {
	var out []string
	var parts []string
	for _, part := range strings.Split(sql, ";\n") {
		if n := len(parts); n > 0 && strings.Count(parts[n-1], "$$")%2 == 1 {
			parts[n-1] += ";\n" + part // still in the body
			continue
		}
		parts = append(parts, part)
	}
	for _, part := range parts {
		code := false
		for _, line := range strings.Split(part, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "--") {
				code = true
			}
		}
		if code {
			out = append(out, strings.TrimSpace(part))
		}
	}
	return out
}
