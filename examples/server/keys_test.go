package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/store/sqlstore"
)

func TestLoadKeysCreatesThenReuses(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "paykit.db.keys")
	sign1, ring1, err := loadKeys(path)
	is.NoErr(err)
	info, err := os.Stat(path)
	is.NoErr(err)
	is.Equal(info.Mode().Perm(), os.FileMode(0o600)) // secrets: owner only
	sign2, ring2, err := loadKeys(path)
	is.NoErr(err)
	is.Equal(sign1, sign2)
	keyID, sealed, err := ring1.Seal("123456789012", "po_1")
	is.NoErr(err)
	opened, err := ring2.Open(keyID, sealed, "po_1")
	is.NoErr(err)
	is.Equal(opened, "123456789012") // what one start sealed, the next opens

	// Without a path the keys are fresh each time and nothing is written.
	a, _, err := loadKeys("")
	is.NoErr(err)
	b, _, err := loadKeys("")
	is.NoErr(err)
	is.True(string(a) != string(b))

	bad := filepath.Join(t.TempDir(), "bad.keys")
	is.NoErr(os.WriteFile(bad, []byte(`{"signing_key":"c2hvcnQ=","active_account_key":"k1","account_keys":{}}`), 0o600))
	_, _, err = loadKeys(bad)
	is.True(err != nil) // a short signing key is refused
}

func TestDefaultKeysPath(t *testing.T) {
	is := is.New(t)
	is.Equal(defaultKeysPath("memory"), "")
	is.Equal(defaultKeysPath("sqlite:/var/lib/paykit/paykit.db"), "/var/lib/paykit/paykit.db.keys")
	is.Equal(defaultKeysPath("postgres://db/paykit"), "") // kept in the database
	is.Equal(defaultKeysPath("sqlite::memory:"), "")
}

// A list cursor signed before a restart is still accepted after it.
func TestCursorSurvivesRestart(t *testing.T) {
	is := is.New(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "paykit.db")
	first := start(t, "-db", db, "-addr", "127.0.0.1:0", "-operator-token", "fixed-operator-token-123")
	status, _, body := call(t, "GET", first.url+"/operator/audit_events?limit=1", "", bearerAuth(first.token))
	is.Equal(status, http.StatusOK)
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	is.NoErr(json.Unmarshal(body, &page))
	is.True(page.NextCursor != "")
	is.NoErr(first.stop())

	second := start(t, "-db", db, "-addr", "127.0.0.1:0", "-operator-token", "fixed-operator-token-123")
	status, _, _ = call(t, "GET", second.url+"/operator/audit_events?limit=1&cursor="+page.NextCursor, "", bearerAuth(second.token))
	is.Equal(status, http.StatusOK) // signed with the kept key
	_, err := os.Stat(filepath.Join(filepath.Dir(db[len("sqlite:"):]), "paykit.db.keys"))
	is.NoErr(err)
	is.NoErr(second.stop())

	// The same database under other keys: what it holds would not open, so
	// the server refuses to start.
	err = run(context.Background(), []string{"-db", db, "-addr", "127.0.0.1:0", "-keys", filepath.Join(t.TempDir(), "other.keys")},
		func(string) string { return "" }, io.Discard, io.Discard)
	is.True(err != nil)
	is.True(errors.Is(err, keyring.ErrMismatch)) // paykit.New checks the keys
	is.True(strings.Contains(err.Error(), "start with the keys this database was first started with"))
}

// On PostgreSQL the keys in the database are checked the same way: a
// server given other keys refuses to start, and a rotated keyring (a new
// active key beside the old one) is accepted.
func TestKeysMustMatchTheDatabase(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Database(t)
	first := startEnv(t, pgKeys, "-db", dsn, "-addr", "127.0.0.1:0") // keys made and kept, wrapped, in the database
	is.NoErr(first.stop())

	noEnv := func(string) string { return "" }
	other := filepath.Join(t.TempDir(), "other.keys")
	err := run(context.Background(), []string{"-db", dsn, "-addr", "127.0.0.1:0", "-keys", other}, noEnv, io.Discard, io.Discard)
	is.True(errors.Is(err, keyring.ErrMismatch))

	// The database's own keys, unwrapped and rotated: a new active account key beside k1.
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	is.NoErr(err)
	var stored string
	is.NoErr(s.DB().NewRaw("SELECT keys FROM paykit_server_keys WHERE id = 1").Scan(ctx, &stored))
	is.NoErr(s.Close())
	var row storedKeys
	is.NoErr(json.Unmarshal([]byte(stored), &row))
	is.True(row.Wrapped)
	w, err := keyWrapper(func(k string) string { return pgKeys[k] })
	is.NoErr(err)
	kf := keyFile{ActiveAccount: "k2", AccountKeys: map[string][]byte{}}
	kf.SigningKey, err = w.UnwrapKey(ctx, wrapSigningID, row.SigningKey)
	is.NoErr(err)
	kf.AccountKeys["k1"], err = w.UnwrapKey(ctx, "k1", row.AccountKeys["k1"])
	is.NoErr(err)
	kf.AccountKeys["k2"] = []byte("0123456789abcdef0123456789abcdef")
	rotated := filepath.Join(t.TempDir(), "rotated.keys")
	data, _ := json.Marshal(kf)
	is.NoErr(os.WriteFile(rotated, data, 0o600))
	again := start(t, "-db", dsn, "-addr", "127.0.0.1:0", "-keys", rotated)
	status, _, _ := call(t, "GET", again.url+"/healthz", "", nil)
	is.Equal(status, http.StatusOK)
	is.NoErr(again.stop())

	// Dropping k1, which sealed data, is refused.
	delete(kf.AccountKeys, "k1")
	data, _ = json.Marshal(kf)
	is.NoErr(os.WriteFile(rotated, data, 0o600))
	err = run(context.Background(), []string{"-db", dsn, "-addr", "127.0.0.1:0", "-keys", rotated}, noEnv, io.Discard, io.Discard)
	is.True(errors.Is(err, keyring.ErrMismatch))
	is.True(strings.Contains(err.Error(), `"k1"`))
}

func TestSandboxDB(t *testing.T) {
	is := is.New(t)
	is.Equal(sandboxDB("sqlite:/var/lib/paykit/paykit.db"), "sqlite:/var/lib/paykit/paykit.sandbox.db")
	is.Equal(sandboxDB("sqlite:data"), "sqlite:data.sandbox.db")
	// Shared by every server on it; the PSP's sessions commit asynchronously.
	is.Equal(sandboxDB("postgres://db/paykit"), "postgres://db/paykit?synchronous_commit=off")
	is.Equal(sandboxDB("postgres://u@h:5432/db?sslmode=disable"), "postgres://u@h:5432/db?sslmode=disable&synchronous_commit=off")
}

func TestSandboxDBCommitsAsynchronously(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s, err := sqlstore.Open(ctx, sandboxDB(dsn))
	is.NoErr(err)
	defer s.Close()
	var setting string
	is.NoErr(s.DB().NewRaw("SHOW synchronous_commit").Scan(ctx, &setting))
	is.Equal(setting, "off")
	paykitStore, err := sqlstore.Open(ctx, dsn)
	is.NoErr(err)
	defer paykitStore.Close()
	is.NoErr(paykitStore.DB().NewRaw("SHOW synchronous_commit").Scan(ctx, &setting))
	is.Equal(setting, "on") // paykit's own commits wait for the disk
}
