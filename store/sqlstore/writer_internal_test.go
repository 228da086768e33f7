package sqlstore

import "testing"

func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT "a" FROM t`:                  true,
		` (SELECT 1) UNION (SELECT 2)`:       true,
		`INSERT INTO t VALUES (1)`:           false,
		`UPDATE t SET a = 1 RETURNING *`:     false,
		`DELETE FROM t`:                      false,
		`WITH x AS (SELECT 1) DELETE FROM t`: false,
		`SELECTED`:                           false,
	} {
		if got := isRead(q); got != want {
			t.Errorf("isRead(%q) = %v, want %v", q, got, want)
		}
	}
}
