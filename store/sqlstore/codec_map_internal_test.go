package sqlstore

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// mapToJSON writes the object encoding/json writes, escaping aside, and it
// reads back as the map it was.
func TestMapToJSON(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range 40 {
		many[strings.Repeat("k", i+1)] = strings.Repeat("v", 20)
	}
	for _, m := range []map[string]string{
		{}, {"a": ""}, {"name": "A", "email": "a@example.com"}, many,
		{"q\"uote": "back\\slash", "ctl": "\t\n\x01", "html": "<a>&", "uni": "คำ😀\u2028"},
	} {
		got, err := mapToJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil || !maps.Equal(back, m) {
			t.Errorf("%q read back as %q (%v)", got, back, err)
		}
		if _, html := m["html"]; !html {
			want, _ := json.Marshal(m)
			if got != string(want) {
				t.Errorf("got %s, encoding/json %s", got, want)
			}
		}
	}
	if s, err := mapToJSON(nil); s != "" || err != nil {
		t.Errorf("nil map: %q %v", s, err)
	}
}
