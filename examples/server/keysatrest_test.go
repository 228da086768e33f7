package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/pgtest"
	"github.com/paykit/paykit/paykittest"
)

// pgKeys is the environment of the tests' servers on PostgreSQL: the key
// that wraps the keys kept in the database.
var pgKeys = map[string]string{keyEncryptionKeyEnv: base64.StdEncoding.EncodeToString([]byte("tests-key-encryption-key-32bytes"))}

// A dump of the example server's PostgreSQL database holds no key in
// clear: every table's text is scanned for the signing and account keys in
// hex and base64. The same scan finds them with -keys-in-db, the demo
// opt-in, which warns at every start.
func TestPostgresDumpHoldsNoKeyInClear(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.Database(t)
	s := startEnv(t, pgKeys, "-db", dsn, "-addr", "127.0.0.1:0")
	s.createPayout(t, "po-dump") // an account number sealed
	is.NoErr(s.stop())
	is.True(!strings.Contains(s.stderr.String(), "IN CLEAR"))
	keys := storedKeyFile(t, dsn)
	dump := dumpText(t, dsn)
	is.True(strings.Contains(dump, "paykit_server_keys")) // the scan sees the keys' table
	for name, forms := range keyForms(keys) {
		for _, f := range forms {
			if strings.Contains(dump, f) {
				t.Errorf("the database holds %s in clear (%q)", name, f[:8])
			}
		}
	}

	// The demo opt-in keeps them in clear, which the scan finds, and says so at every start.
	demo := pgtest.Database(t)
	for range 2 {
		d := start(t, "-db", demo, "-addr", "127.0.0.1:0", "-keys-in-db")
		is.NoErr(d.stop())
		is.True(strings.Contains(d.stderr.String(), "level=WARN"))
		is.True(strings.Contains(d.stderr.String(), "IN CLEAR in the database"))
	}
	dump = dumpText(t, demo)
	found := false
	for _, forms := range keyForms(storedKeyFile(t, demo)) {
		for _, f := range forms {
			found = found || strings.Contains(dump, f)
		}
	}
	is.True(found)
}

// On PostgreSQL without -keys the server needs the key encryption key (or
// the explicit demo opt-in), refuses a wrong one, and wraps keys it finds in
// clear, keeping them the same.
func TestPostgresKeysComeFromOutside(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dsn := pgtest.Database(t)
	noEnv := func(string) string { return "" }

	// Without the variable, the key that wraps them is a file of this
	// machine's, outside the database, found again by the next start.
	config := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	mdsn := pgtest.Database(t)
	m := startEnv(t, config, "-db", mdsn, "-addr", "127.0.0.1:0")
	is.NoErr(m.stop())
	is.True(strings.Contains(m.stderr.String(), "a file of this machine"))
	kekFiles, err := filepath.Glob(filepath.Join(config["XDG_CONFIG_HOME"], "paykit", "kek-*"))
	is.NoErr(err)
	is.Equal(len(kekFiles), 1)
	again := startEnv(t, config, "-db", mdsn, "-addr", "127.0.0.1:0")
	is.NoErr(again.stop())
	kek, err := os.ReadFile(kekFiles[0])
	is.NoErr(err)
	mkeys := storedKeyFileWith(t, mdsn, map[string]string{keyEncryptionKeyEnv: string(kek)})
	dumped := dumpText(t, mdsn)
	for _, f := range keyForms(mkeys)["signing key"] {
		is.True(!strings.Contains(dumped, f))
	}

	bad := func(k string) string {
		if k == keyEncryptionKeyEnv {
			return "c2hvcnQ=" // "short"
		}
		return ""
	}
	err = run(ctx, []string{"-db", dsn, "-addr", "127.0.0.1:0"}, bad, io.Discard, io.Discard)
	is.True(err != nil && strings.Contains(err.Error(), "32 random bytes in base64"))
	is.True(!strings.Contains(err.Error(), "c2hvcnQ="))

	// Keys kept in clear by a demo, then wrapped once the key encryption key is set.
	d := start(t, "-db", dsn, "-addr", "127.0.0.1:0", "-keys-in-db")
	is.NoErr(d.stop())
	clear := storedKeyFile(t, dsn)
	s := startEnv(t, pgKeys, "-db", dsn, "-addr", "127.0.0.1:0")
	is.NoErr(s.stop())
	is.True(strings.Contains(s.stderr.String(), "wrapped the keys kept in clear"))
	is.Equal(storedKeyFile(t, dsn), clear) // the same keys, now wrapped
	dump := dumpText(t, dsn)
	for _, f := range keyForms(clear)["signing key"] {
		is.True(!strings.Contains(dump, f))
	}

	other := map[string]string{keyEncryptionKeyEnv: base64.StdEncoding.EncodeToString([]byte("another-key-encryption-key-32byt"))}
	err = run(ctx, []string{"-db", dsn, "-addr", "127.0.0.1:0"}, func(k string) string { return other[k] }, io.Discard, io.Discard)
	is.True(err != nil && strings.Contains(err.Error(), "is not the key that wrapped the keys"))
	err = run(ctx, []string{"-db", dsn, "-addr", "127.0.0.1:0", "-keys-in-db"}, noEnv, io.Discard, io.Discard)
	is.True(err != nil && strings.Contains(err.Error(), "wrapped: set "+keyEncryptionKeyEnv))
}

// storedKeyFile is the keys in paykit_server_keys, unwrapped with pgKeys
// when wrapped.
func storedKeyFile(t *testing.T, dsn string) keyFile {
	t.Helper()
	return storedKeyFileWith(t, dsn, pgKeys)
}

// storedKeyFileWith is storedKeyFile unwrapping with the key in vars.
func storedKeyFileWith(t *testing.T, dsn string, vars map[string]string) keyFile {
	t.Helper()
	ctx := context.Background()
	s := paykittest.OpenSQL(t, dsn)
	var text string
	if err := s.DB().NewRaw("SELECT keys FROM paykit_server_keys WHERE id = 1").Scan(ctx, &text); err != nil {
		t.Fatal(err)
	}
	var row storedKeys
	if err := json.Unmarshal([]byte(text), &row); err != nil {
		t.Fatal(err)
	}
	if !row.Wrapped {
		return row.keyFile
	}
	w, err := keyWrapper(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	kf := keyFile{ActiveAccount: row.ActiveAccount, AccountKeys: map[string][]byte{}}
	if kf.SigningKey, err = w.UnwrapKey(ctx, wrapSigningID, row.SigningKey); err != nil {
		t.Fatal(err)
	}
	for id, wrapped := range row.AccountKeys {
		if kf.AccountKeys[id], err = w.UnwrapKey(ctx, id, wrapped); err != nil {
			t.Fatal(err)
		}
	}
	return kf
}

// keyForms is each key of kf in the text forms a dump could hold it in.
func keyForms(kf keyFile) map[string][]string {
	forms := func(b []byte) []string {
		return []string{
			hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
			base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
			base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		}
	}
	out := map[string][]string{"signing key": forms(kf.SigningKey)}
	for id, key := range kf.AccountKeys {
		out["account key "+id] = forms(key)
	}
	return out
}

// dumpText is every row of every table of the database as text, each
// preceded by its table's name: what pg_dump would show of the data.
func dumpText(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	s := paykittest.OpenSQL(t, dsn)
	var tables []struct {
		Schema string `bun:"table_schema"`
		Name   string `bun:"table_name"`
	}
	if err := s.DB().NewRaw(`SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`).Scan(ctx, &tables); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("only %d tables", len(tables))
	}
	var b strings.Builder
	for _, tb := range tables {
		var rows []string
		q := `SELECT t::text FROM "` + tb.Schema + `"."` + tb.Name + `" t`
		if err := s.DB().NewRaw(q).Scan(ctx, &rows); err != nil {
			t.Fatal(errors.Join(errors.New(q), err))
		}
		b.WriteString(tb.Name + "\n" + strings.Join(rows, "\n") + "\n")
	}
	return b.String()
}
