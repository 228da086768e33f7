package webhooks

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func newTestSecret(t *testing.T) string {
	t.Helper()
	s, err := NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSecret(t *testing.T) {
	is := is.New(t)
	s, err := NewSecret(bytes.NewReader(bytes.Repeat([]byte{0xAB}, 40)))
	is.NoErr(err)
	is.Equal(s, "whsec_"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xAB}, 32)))

	s1, s2 := newTestSecret(t), newTestSecret(t)
	is.True(s1 != s2)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s1, "whsec_"))
	is.NoErr(err)
	is.Equal(len(key), 32)

	_, err = NewSecret(bytes.NewReader(make([]byte, 31))) // short read
	is.True(err != nil)
}

func TestSignRejectsBadInput(t *testing.T) {
	good := newTestSecret(t)
	now := time.Now()
	cases := []struct {
		name    string
		secrets []string
		msgID   string
		ts      time.Time
		secret  bool // error wraps ErrInvalidSecret
	}{
		{"no secrets", nil, "m", now, true},
		{"no prefix", []string{strings.TrimPrefix(good, "whsec_")}, "m", now, true},
		{"not base64", []string{"whsec_!!!"}, "m", now, true},
		{"too short", []string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23))}, "m", now, true},
		{"too long", []string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65))}, "m", now, true},
		{"second secret bad", []string{good, "whsec_"}, "m", now, true},
		{"empty id", []string{good}, "", now, false},
		{"id with newline", []string{good}, "m\r\nX-Evil: 1", now, false},
		{"zero time", []string{good}, "m", time.Time{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := Sign(c.secrets, c.msgID, c.ts, []byte("{}"))
			is.True(err != nil)
			is.Equal(errors.Is(err, ErrInvalidSecret), c.secret)
		})
	}
	// 24 and 64 bytes are the bounds a secret may have.
	for _, n := range []int{24, 64} {
		_, err := Sign([]string{"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, n))}, "m", now, nil)
		if err != nil {
			t.Errorf("%d-byte secret: %v", n, err)
		}
	}
}
