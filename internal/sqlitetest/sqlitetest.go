// Package sqlitetest gives tests a new SQLite file with the schema already
// in place, copied from a template migrated once.
package sqlitetest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Migrated returns the path of a new SQLite file in t.TempDir(): a copy of
// a template that migrate (given the template's path; it must close every
// connection before it returns) built once. The template lives in the
// OS's temporary directory under a name that holds key (the schema's
// digest), so test processes share it; templates of other keys are
// removed when a new one is built.
func Migrated(t TB, key string, migrate func(path string) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paykit.db")
	if err := os.WriteFile(path, Image(t, key, migrate), 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	return path
}

// Image returns a copy of the template's bytes (see Migrated), for a
// database that is not a file (sqlite3_deserialize).
func Image(t TB, key string, migrate func(path string) error) []byte {
	t.Helper()
	v, _ := templates.LoadOrStore(key, &template{})
	tp := v.(*template)
	tp.once.Do(func() { tp.data, tp.err = load(key, migrate) })
	if tp.err != nil {
		t.Fatalf("sqlitetest: template: %v", tp.err)
	}
	return slices.Clone(tp.data)
}

// TB is the part of testing.TB the package uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

var _ TB = testing.TB(nil)

// template is one process's copy of a template file.
type template struct {
	once sync.Once
	data []byte
	err  error
}

var templates sync.Map // key → *template

// load reads the template of key, building it first when no process has.
func load(key string, migrate func(string) error) ([]byte, error) {
	dir := os.TempDir()
	final := filepath.Join(dir, "paykit-tmpl-"+key[:16]+".db")
	if data, err := os.ReadFile(final); err == nil {
		return data, nil
	}
	build, err := os.MkdirTemp(dir, "paykit-tmpl-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(build)
	path := filepath.Join(build, "t.db")
	if err := migrate(path); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%s-wal is not checkpointed: a connection is still open", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// Another process may build the same template meanwhile: the same
	// bytes, and the rename is atomic.
	if err := os.Rename(path, final); err != nil {
		return nil, err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "paykit-tmpl-*.db"))
	for _, f := range stale {
		if f != final && !strings.HasPrefix(filepath.Base(f), "paykit-tmpl-build-") {
			_ = os.Remove(f)
		}
	}
	return data, nil
}
