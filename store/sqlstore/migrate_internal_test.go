package sqlstore

import (
	"testing"

	"github.com/matryer/is"
)

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
