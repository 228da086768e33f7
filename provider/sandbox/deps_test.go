package sandbox_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMemoryHostLinksNoDatabase: a host keeping the PSP in memory (the
// package itself, and examples/embed on the memory Store) links neither
// bun nor pgx; the SQL state is package sandboxsql's.
func TestMemoryHostLinksNoDatabase(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, pkg := range []string{"github.com/paykit/paykit/provider/sandbox", "github.com/paykit/paykit/examples/embed"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for dep := range strings.Lines(string(out)) {
			if strings.HasPrefix(dep, "github.com/uptrace/bun") || strings.HasPrefix(dep, "github.com/jackc/pgx") {
				t.Errorf("%s links %s", pkg, strings.TrimSpace(dep))
			}
		}
	}
}
