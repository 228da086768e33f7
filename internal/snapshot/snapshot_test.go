package snapshot

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json")

// resources are one value of each resource type.
func resources() []paykit.Resource {
	return []paykit.Resource{&paykit.PaymentIntent{}, &paykit.Checkout{}, &paykit.PayoutIntent{}, &paykit.Refund{}, &paykit.WebhookEndpoint{}, &paykit.Dispute{}}
}

// TestFormat pins the snapshot of each resource type with every field set
// (testdata/<object>.json): a field renamed, added or dropped changes
// stored data, and fails it until the file is rewritten (-update) on
// purpose.
func TestFormat(t *testing.T) {
	if len(types) != len(resources()) {
		t.Fatalf("%d types decode, %d are tested", len(types), len(resources()))
	}
	for _, r := range resources() {
		t.Run(r.Object(), func(t *testing.T) {
			is := is.New(t)
			fill(reflect.ValueOf(r).Elem(), "")
			got, err := Marshal(r)
			is.NoErr(err)
			path := filepath.Join("testdata", r.Object()+".json")
			if *update {
				pretty := jsontext.Value(bytes.Clone(got))
				is.NoErr(pretty.Indent())
				is.NoErr(os.WriteFile(path, append(pretty, '\n'), 0o644))
			}
			file, err := os.ReadFile(path)
			is.NoErr(err)
			want := jsontext.Value(file)
			is.NoErr(want.Compact()) // the file is indented; members keep their order
			if !bytes.Equal(got, want) {
				t.Errorf("snapshot of %s:\n%s\nwant (%s):\n%s", r.Object(), got, path, want)
			}
			back, err := Unmarshal(want)
			is.NoErr(err)
			is.Equal(back, r) // every field read back
		})
	}
}

// TestNamesAreTags: every field of a resource, and of the structs it
// holds or embeds, has its JSON name in a tag, so a Go rename cannot
// change it.
func TestNamesAreTags(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var check func(reflect.Type)
	check = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != "github.com/paykit/paykit" || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			// An embedded struct's members are inlined: its own fields carry the names.
			if f.IsExported() && !f.Anonymous && (name == "" || name == "-") {
				t.Errorf("%s.%s has no json name", typ.Name(), f.Name)
			}
			check(f.Type)
		}
	}
	for _, r := range resources() {
		check(reflect.TypeOf(r))
	}
	if len(seen) < 8 {
		t.Errorf("%d types checked", len(seen))
	}
}

// Zero values are left out, and nil and empty maps stay apart.
func TestZeroValues(t *testing.T) {
	is := is.New(t)
	b, err := Marshal(&paykit.PaymentIntent{})
	is.NoErr(err)
	is.Equal(string(b), `{"object":"payment_intent"}`)
	pi := &paykit.PaymentIntent{ID: "pi_1", Customer: map[string]string{}}
	b, err = Marshal(pi)
	is.NoErr(err)
	is.Equal(string(b), `{"object":"payment_intent","id":"pi_1","customer":{}}`)
	back, err := Unmarshal(b)
	is.NoErr(err)
	is.Equal(back, paykit.Resource(pi))
	is.True(back.(*paykit.PaymentIntent).PaymentMethodOptions == nil)
}

func TestAnswer(t *testing.T) {
	is := is.New(t)
	a := &paykit.StoredAnswer{Kind: paykit.AnswerAccepted, Resource: &paykit.Refund{ID: "re_1", Amount: 100}}
	b, err := MarshalAnswer(a)
	is.NoErr(err)
	is.Equal(string(b), `{"kind":"accepted","resource":{"object":"refund","id":"re_1","amount":100}}`)
	back, err := UnmarshalAnswer(b)
	is.NoErr(err)
	is.Equal(back, a)
}

// What is not a snapshot of a known type is refused.
func TestRefused(t *testing.T) {
	for _, b := range []string{
		`{"object":"balance_transaction","id":"txn_1"}`,
		`{"id":"pi_1"}`,
		`{"object":"payment_intent","ID":"pi_1"}`,
		`{"object":"payment_intent","id":"pi_1","note":"x"}`,
		`{"object":"payment_intent","id":"pi_1","id":"pi_2"}`,
		`{"object":"refund","amount":"100"}`,
		`[]`,
	} {
		if r, err := Unmarshal([]byte(b)); err == nil {
			t.Errorf("%s read as %#v", b, r)
		}
	}
	if _, err := UnmarshalAnswer([]byte(`{"kind":"created","resource":{"object":"refund"},"status":201}`)); err == nil {
		t.Error("an answer with an unknown member was read")
	}
}

// fill sets every field of v to a value that is not zero and tells it
// from the others (path names it).
func fill(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(strings.ToLower(strings.TrimPrefix(path, ".")))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(path)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("b"+path), reflect.ValueOf("2"))
		v.SetMapIndex(reflect.ValueOf("a"+path), reflect.ValueOf("1"))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), path+"[0]")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path)
	case reflect.Uint8:
		v.SetUint(uint64(len(path)))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, len(path), time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		panic("fill: " + v.Type().String())
	}
}
