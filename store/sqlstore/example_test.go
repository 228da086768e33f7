package sqlstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit/store/sqlstore"
)

// A host's own table written through the Store: on SQLite the transaction
// waits its turn with paykit's writers instead of polling the file's lock.
func ExampleStore_RunInTx() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "paykit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "paykit.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if _, err := store.DB().ExecContext(ctx, "CREATE TABLE orders (id TEXT PRIMARY KEY, total BIGINT NOT NULL)"); err != nil {
		log.Fatal(err)
	}

	err = store.RunInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, total) VALUES (?, ?)", "order-1", 4200); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO orders (id, total) VALUES (?, ?)", "order-2", 1500)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	var n, total int64
	if err := store.DB().QueryRowContext(ctx, "SELECT count(*), sum(total) FROM orders").Scan(&n, &total); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "orders,", total, "in all")
	// Output: 2 orders, 5700 in all
}
