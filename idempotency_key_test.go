package paykit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// validIdempotencyKey accepts exactly what the pattern ^[!-~]{1,255}$
// does (1 to 255 printable ASCII characters).
func TestValidIdempotencyKeyAsPattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[!-~]{1,255}$`)
	keys := []string{"", "a", "k-1", " ", "a b", "~", "!", "\x7f", "\x00", "é", "ключ", "\xff", "a\n",
		strings.Repeat("k", 254), strings.Repeat("k", 255), strings.Repeat("k", 256), strings.Repeat("é", 100)}
	for c := 0; c < 256; c++ {
		keys = append(keys, string([]byte{byte(c)}), "k"+string([]byte{byte(c)}))
	}
	for _, k := range keys {
		if got, want := validIdempotencyKey(k), pattern.MatchString(k); got != want {
			t.Errorf("validIdempotencyKey(%q) = %t, the pattern says %t", k, got, want)
		}
	}
}

// A resume job's payload is what json.Marshal writes.
func TestResumePayloadAsEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"k-1", `q"b\s`, "<a>&b", "!~"} {
		want, _ := json.Marshal(resumePayload{IdempotencyKey: k})
		if got := (&IdempotencyRecord{Key: k}).resumePayload(); string(got) != string(want) {
			t.Errorf("resumePayload(%q) = %s, json.Marshal: %s", k, got, want)
		}
	}
}

// A create's fingerprint hashes json.Marshal of the request, byte for
// byte, so that keys stored before match after: every field, the maps
// nil, empty and full, and strings that encoding/json escapes.
func TestCreateFingerprintAsEncodingJSON(t *testing.T) {
	t.Parallel()
	texts := []string{"", "MYR", "a\"b\\c", "<tag>&amp;", "line\nbreak\t\x01", "é ünï", "\u2028\u2029", "\xff\xfe bad", "emoji 🎉", "ref-123"}
	maps := []map[string]string{nil, {}, {"name": "A"}, {"name": "A", "email": "a@example.com", "phone": "+60"},
		{"<k>": "v&", "b": "\x00", "a": "é", "z\"": "\xff", "c": "1", "d": "2", "e": "3", "f": "4", "g": "5", "h": "6"}}
	n := 0
	for i, s := range texts {
		for j, m := range maps {
			req := CreatePaymentIntentRequest{
				Amount: int64(i*1000 - 3), Currency: s, Country: texts[(i+1)%len(texts)], MerchantReference: texts[(i+2)%len(texts)],
				PaymentMethod: texts[(i+3)%len(texts)], Customer: m, PaymentMethodOptions: maps[(i+j)%len(maps)], ReturnURL: texts[(i+j)%len(texts)],
			}
			want, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fingerprint("payment_intent.create ", req)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(append([]byte("payment_intent.create \n"), want...))
			if got != hex.EncodeToString(sum[:]) {
				t.Errorf("fingerprint of %+v differs from the hash of json.Marshal", req)
			}
			n++
		}
	}
	if n != len(texts)*len(maps) {
		t.Fatal("not every request was checked")
	}
}
