package quickjson

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type inner struct {
	Kind string            `json:"kind"`
	URL  string            `json:"url,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

type status string

type sample struct {
	ID      string            `json:"id"`
	Status  status            `json:"status"`
	Amount  int64             `json:"amount_minor"`
	Small   int8              `json:"small"`
	OK      bool              `json:"ok"`
	At      time.Time         `json:"at"`
	Until   *time.Time        `json:"until,omitempty"`
	Payer   map[string]string `json:"payer,omitempty"`
	Action  *inner            `json:"action,omitempty"`
	Nested  inner             `json:"nested"`
	NoTag   string
	skipped string // unexported: neither decodes it
	Ignored string `json:"-"`
}

type unsupported struct {
	Items []string `json:"items"`
}

// TestDecodeAsUnmarshal: on bodies valid and not, whenever Decode says
// true, json.Unmarshal decodes the same value without error, from an
// empty value and from a filled one; and Decode takes the plain ones.
func TestDecodeAsUnmarshal(t *testing.T) {
	plain := `{"id":"pay_1","status":"PAYER_ACTION","amount_minor":15000,"small":-128,"ok":true,` +
		`"at":"2026-11-24T23:00:00.123Z","until":"2026-11-25T00:00:00+07:00","payer":{"name":"Á","email":"a@example.com"},` +
		`"action":{"kind":"REDIRECT","url":"https://psp.example/pay/1","tags":{}},"nested":{"kind":"x"},"NoTag":"n"}`
	taken := []string{plain, "\n " + plain + " \t", `{}`, ` { } `, `{"payer":{}}`, `{"id":"a","id":"b"}`,
		`{"payer":{"a":"1"},"payer":{"b":"2"}}`, `{"action":{"kind":"a"},"action":{"url":"u"}}`, `{"amount_minor":-0}`,
		`{"ok":false}`, `{"small":127}`, "{\"id\":\"\u2028 é\"}"}
	var bodies []string
	bodies = append(bodies, taken...)
	bodies = append(bodies, ``, ` `, `null`, `[]`, `"x"`, `1`, `{`, `}`, `{"id"}`, `{"id":}`, `{"id":"a",}`, `{,}`,
		plain+plain, plain+" x", plain+"}", `{"ID":"a"}`, `{"Id":"a"}`, `{"notag":"a"}`, `{"skipped":"a"}`, `{"Ignored":"a"}`, `{"-":"a"}`,
		`{"unknown":1}`, `{"i\u0064":"a"}`, `{"id":"a\"b"}`, `{"id":"a\\b"}`, `{"id":"tab	"}`, `{"id":"bad`+"\xff"+`"}`,
		`{"id":1}`, `{"id":null}`, `{"id":true}`, `{"amount_minor":"1"}`, `{"amount_minor":1.0}`, `{"amount_minor":1e2}`,
		`{"amount_minor":01}`, `{"amount_minor":-}`, `{"amount_minor":99999999999999999999}`, `{"small":128}`, `{"small":-129}`,
		`{"amount_minor":1x}`, `{"ok":1}`, `{"ok":tru}`, `{"ok":truex}`, `{"ok":null}`, `{"at":"yesterday"}`, `{"at":null}`,
		`{"at":"2026-11-24T23:00:00Z "}`, `{"at":"2026-11-24 23:00:00Z"}`, `{"until":null}`, `{"until":1}`,
		`{"payer":null}`, `{"payer":[]}`, `{"payer":{"a":1}}`, `{"payer":{"a":null}}`, `{"payer":{"a\n":"1"}}`,
		`{"action":null}`, `{"action":"x"}`, `{"action":{"kind":1}}`, `{"action":{"other":"1"}}`, `{"nested":null}`,
		`{"nested":{"tags":{"k":"v"}}}`, `{"id":"a" "status":"b"}`, `{"id" "a"}`, `{"id":"a"`, `{"id":"a`)
	fresh := func() any { return new(sample) }
	filled := func() any {
		until := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		return &sample{ID: "old", Amount: 7, OK: true, Until: &until, Payer: map[string]string{"old": "1"},
			Action: &inner{Kind: "old", Tags: map[string]string{"t": "1"}}, Nested: inner{URL: "old"}, skipped: "old"}
	}
	for _, body := range bodies {
		for _, newV := range []func() any{fresh, filled} {
			got, want := newV(), newV()
			ok := Decode([]byte(body), got)
			err := json.Unmarshal([]byte(body), want)
			if ok && (err != nil || !reflect.DeepEqual(got, want)) {
				t.Errorf("%s:\nDecode    %+v\nUnmarshal %+v %v", body, got, want, err)
			}
		}
	}
	for _, body := range taken {
		if !Decode([]byte(body), new(sample)) {
			t.Errorf("%s: not taken", body)
		}
	}
	if Decode([]byte(`{"items":[]}`), new(unsupported)) || Decode([]byte(`{}`), sample{}) || Decode([]byte(`{}`), (*sample)(nil)) {
		t.Error("took what it cannot decode")
	}
	if testing.Short() {
		return
	}
	// Every one-byte change of the plain body.
	for i := range len(plain) {
		for _, c := range []byte{'"', '\\', '{', '}', ',', ':', ' ', '0', '-', 'x', 'Z', 0x80} {
			body := plain[:i] + string([]byte{c}) + plain[i+1:]
			got, want := new(sample), new(sample)
			if Decode([]byte(body), got) {
				if err := json.Unmarshal([]byte(body), want); err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\nDecode    %+v\nUnmarshal %+v %v", body, got, want, err)
				}
			}
		}
	}
}

// FuzzDecodeAsUnmarshal: whatever Decode takes, json.Unmarshal decodes to
// the same value without error (go test -fuzz FuzzDecodeAsUnmarshal
// ./internal/quickjson searches beyond the seeds).
func FuzzDecodeAsUnmarshal(f *testing.F) {
	for _, seed := range []string{`{}`, `{"id":"a","amount_minor":-5,"ok":true}`, `{"at":"2026-11-24T23:00:00Z","payer":{"a":"b"}}`,
		`{"action":{"kind":"k","tags":{}},"nested":{"url":"u"}}`, `{"id":"a\"b"}`, `{"small":128}`, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, want := new(sample), new(sample)
		if !Decode(body, got) {
			return
		}
		if err := json.Unmarshal(body, want); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\nDecode    %+v\nUnmarshal %+v %v", body, got, want, err)
		}
	})
}
