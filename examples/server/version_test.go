package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// -version prints the version ("devel" in a test binary) and starts
// nothing; PAYKIT_VERSION is no setting.
func TestVersionFlag(t *testing.T) {
	is := is.New(t)
	var out bytes.Buffer
	is.NoErr(run(context.Background(), []string{"-version", "-addr", "127.0.0.1:0", "-db", "memory"}, func(string) string { return "" }, &out, io.Discard))
	is.Equal(out.String(), "paykit devel\n")
	cfg, err := parseConfig(nil, func(k string) string { return map[string]string{"PAYKIT_VERSION": "true"}[k] }, io.Discard)
	is.NoErr(err)
	is.True(!cfg.Version)
}

// The start-up line names the version, the Store and the schema version
// (the newest migration).
func TestStartupLine(t *testing.T) {
	is := is.New(t)
	entries, err := os.ReadDir("../../store/sqlstore/migrations/sqlite")
	is.NoErr(err)
	var newest int
	for _, e := range entries {
		n, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		is.NoErr(err)
		newest = max(newest, n)
	}
	s := start(t, "-db", "sqlite:"+t.TempDir()+"/paykit.db", "-addr", "127.0.0.1:0")
	want := fmt.Sprintf(`msg="paykit starting" version=devel store=sqlite schema_version=%04d`, newest)
	is.True(strings.Contains(s.stderr.String(), want))
	m := start(t, "-db", "memory", "-addr", "127.0.0.1:0")
	is.True(strings.Contains(m.stderr.String(), `msg="paykit starting" version=devel store=memory schema_version=none`))
}
