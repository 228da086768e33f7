package sqlstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
	"github.com/uptrace/bun"

	"github.com/paykit/paykit/internal/pgtest"
)

// onOldSchemas runs test, on a SQLite and a PostgreSQL database of their
// own, with a Store whose database has the migrations before version
// applied and not the others, to check what those do to older data.
func onOldSchemas(t *testing.T, version int, test func(t *testing.T, s *Store)) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "old.db") },
		"postgres": func(t *testing.T) string { return pgtest.Database(t) },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			s, err := Open(ctx, dsn(t))
			is.NoErr(err)
			t.Cleanup(func() { _ = s.Close() })
			ms, err := s.migrations()
			is.NoErr(err)
			for _, m := range ms {
				if m.version >= version {
					break
				}
				is.NoErr(s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return s.apply(ctx, tx, m) }))
			}
			test(t, s)
		})
	}
}

func TestStatementsKeepDollarQuotedBodies(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	got := statements(`
CREATE TABLE a (x INT);

CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM a;
    INSERT INTO a VALUES (1);
END
$$;
-- only a comment
CREATE INDEX a_x ON a (x);
`)
	is.Equal(got, []string{
		"CREATE TABLE a (x INT)",
		"CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n    DELETE FROM a;\n    INSERT INTO a VALUES (1);\nEND\n$$",
		"-- only a comment\nCREATE INDEX a_x ON a (x)",
	})
}
