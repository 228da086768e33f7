// Package sqlstore is the paykit.Store on a SQL database, through
// github.com/uptrace/bun: SQLite (modernc.org/sqlite, pure Go) for a single
// node, PostgreSQL for several. It passes store/storetest on both, so the
// Service behaves the same on either and on store/memory. The host wires it:
//
//	s, err := sqlstore.Open(ctx, "sqlite:/var/lib/paykit/paykit.db") // or a postgres:// URL
//	...
//	err = s.Migrate(ctx) // at every start
//
// # Atomicity
//
// InTx is one database transaction; every other method is one autocommit
// statement (an insert that collides, or an update that changes no row,
// adds a read to tell the cases apart). Lost updates are prevented the same
// way on both backends: mutable rows carry a version and Update methods
// write WHERE id = ? AND version = ?, returning paykit.ErrVersionConflict
// when the row has moved on; the Service re-reads and retries.
//
//   - SQLite: transactions begin IMMEDIATE, so writers are serialized at
//     BEGIN and a transaction's reads are never stale for its writes. WAL
//     lets readers run beside the writer. The writers of one process queue
//     in it, one at a time (reads outside transactions do not queue), so
//     none polls the lock under busy_timeout; a writer waits up to 5 s for
//     its turn, and up to 5 s more for the lock should another process hold
//     it; SQLITE_BUSY and SQLITE_LOCKED become ErrVersionConflict. The
//     transactions that queue while one runs commit together as the next
//     group, each in a savepoint of its own (group.go).
//   - PostgreSQL: READ COMMITTED. Versioned updates and unique indexes catch
//     the races that isolation level allows; serialization failures and
//     deadlocks (40001, 40P01) become ErrVersionConflict. ClaimJobs locks
//     the rows it picks with FOR UPDATE SKIP LOCKED.
//
// Outside a batched transaction (see below), inserts use ON CONFLICT DO
// NOTHING and then look up which unique key was taken to build the
// *paykit.ConflictError. Unlike a failed INSERT this leaves a PostgreSQL
// transaction usable, which the Service relies on when it treats an
// already-enqueued job (same dedup key) as success. ErrNotFound
// and ErrVersionConflict from Get and Update are answers, not failed
// statements, and leave the transaction usable too; any other error aborts a
// PostgreSQL transaction, and fn must return it. fn must use the Tx it is
// given, never the Store (with sqlite::memory:, which has a single
// connection, calling the Store inside fn blocks forever).
//
// # Ledger
//
// PostLedger writes a transaction's entries (ledger_entries, immutable:
// triggers refuse UPDATE and DELETE) and applies it to the rows of
// balances, one per scope, currency and non-external account of the chart
// (paykit.LookupAccount), in one database transaction. The balance change
// is a single statement: an upsert of the rows it changes, which, when a
// debit is guarded (its account's rule does not let the transaction's kind
// take it below zero), first locks those rows (FOR UPDATE on PostgreSQL)
// and writes none of them unless every guarded one stays at or above zero;
// no row changed is ErrInsufficientFunds with nothing written. On
// PostgreSQL concurrent posts queue on those row locks, taken in account
// order, and each reads the balance the previous one committed, so none
// can overdraw; a deadlock (two posts of one transaction against another's)
// is ErrVersionConflict. The sign rule lives in the chart, not in a CHECK;
// on SQLite a CHECK refuses the REAL an overflowing sum would become.
//
// # Durability
//
// SQLite runs with synchronous(FULL): every commit is fsynced to the WAL
// before InTx returns, so a committed payment survives power loss, at the
// cost of one fsync per group of queued write transactions. On PostgreSQL
// durability is the server's (synchronous_commit, replication). Open's SQLite settings are
//
//	file:PATH?_pragma=busy_timeout(5000)&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)&_txlock=immediate
//
// and a host that passes its own bun.DB to New should use the same.
// temp_store(MEMORY) keeps the statement journal of a group's savepoints
// in memory: on a file, every page a group touched was written twice.
//
// # Time
//
// Times are written in UTC at microsecond precision (the Service stores
// milliseconds) and converted to UTC on the way out, since drivers return
// local time. SQLite keeps them as text in one UTC format that sorts in
// time order. Lists page by keyset, (created_at, id) < (?, ?), newest
// first, over (…, created_at DESC, id DESC) indexes, so a page deep in a
// large table costs what the first page does. Ids compare bytewise (BINARY
// in SQLite, COLLATE "C" in PostgreSQL), the same order as Go's.
//
// # PostgreSQL driver
//
// Open uses pgx through its database/sql adapter, with the simple query
// protocol: bun inlines every argument into the SQL text, so prepared
// statements would only fill pgx's statement cache. pgx was chosen over
// bun's own pgdriver because it reads DSNs and sslmode as libpq does
// (prefer falls back to plain text, verify-full verifies), cancels the
// server-side query when the context ends, and has no fixed read timeout
// that would cut off a long migration. A host may still pass New a bun.DB
// on pgdriver; its errors are recognized too.
//
// # Batched transactions
//
// On PostgreSQL, InTx sends a transaction's inserts and versioned updates
// together with the next statement that needs an answer, or with COMMIT,
// and BEGIN with the first of them: a payment create's first transaction
// is one round trip, its second three. A held write that fails (a
// collision, a stale version) fails its batch on the server; the
// transaction is then rolled back and fn runs once more with every
// statement sent on its own, which reports the failure at the call as
// always. batch.go has the details.
//
// # Migrations
//
// The schema lives in migrations/sqlite and migrations/postgres, embedded
// in the binary: one NNNN_area.sql file per change, same names in both
// directories. Migrate applies each missing file and records it in
// paykit_schema_migrations in the same transaction, so a crash never leaves
// a half-applied, or applied but unrecorded, migration; on PostgreSQL an
// advisory lock makes concurrent Migrate calls wait for each other. This
// is why the package does not use bun/migrate, which records a migration
// outside the migration's own transaction and fails instead of waiting
// when another process holds its lock.
package sqlstore
