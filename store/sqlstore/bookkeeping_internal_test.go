package sqlstore

import (
	"context"
	"testing"

	"github.com/matryer/is"
)

// TestBookkeepingCommitsAsynchronously: on PostgreSQL a worker's job update
// runs with synchronous_commit off for its own statement only, reports the
// rows it changed, and leaves the pooled session as it was.
func TestBookkeepingCommitsAsynchronously(t *testing.T) {
	is := is.New(t)
	s := openPostgres(t)
	ctx := context.Background()
	_, err := s.db.ExecContext(ctx, "CREATE TABLE bookkeeping_probe (id int PRIMARY KEY, setting text)")
	is.NoErr(err)
	_, err = s.db.ExecContext(ctx, "INSERT INTO bookkeeping_probe VALUES (1, ''), (2, '')")
	is.NoErr(err)
	s.db.SetMaxOpenConns(1) // the next statements share one session

	update := func(id int) int64 {
		res, err := s.tx.execBookkeeping(ctx, s.db.NewUpdate().Table("bookkeeping_probe").
			Set("setting = current_setting('synchronous_commit')").Where("id = ?", id))
		is.NoErr(err)
		n, err := res.RowsAffected()
		is.NoErr(err)
		return n
	}
	is.Equal(update(1), int64(1))
	is.Equal(update(3), int64(0)) // no such row: nothing changed, as the caller must learn
	var setting string
	is.NoErr(s.db.NewRaw("SELECT setting FROM bookkeeping_probe WHERE id = 1").Scan(ctx, &setting))
	is.Equal(setting, "off")
	is.NoErr(s.db.NewRaw("SHOW synchronous_commit").Scan(ctx, &setting))
	is.Equal(setting, "on") // the session keeps waiting for the disk

	// Inside a transaction the update is the transaction's, as written.
	tx, err := s.db.BeginTx(ctx, nil)
	is.NoErr(err)
	inTx := s.tx
	inTx.db, inTx.store = tx, nil
	res, err := inTx.execBookkeeping(ctx, tx.NewUpdate().Table("bookkeeping_probe").
		Set("setting = current_setting('synchronous_commit')").Where("id = ?", 2))
	is.NoErr(err)
	n, err := res.RowsAffected()
	is.NoErr(err)
	is.Equal(n, int64(1))
	is.NoErr(tx.Commit())
	is.NoErr(s.db.NewRaw("SELECT setting FROM bookkeeping_probe WHERE id = 2").Scan(ctx, &setting))
	is.Equal(setting, "on")
}
