package paykit_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/keyring"
	"github.com/paykit/paykit/paykittest"
	"github.com/paykit/paykit/store/memory"
)

// New refuses keys that cannot read what the Store holds, on every Store:
// another signing key, other bytes under a recorded account key id, or a
// keyring that dropped a key that sealed data. A rotation that keeps the
// old key, decrypt-only, passes; so does a restart with the same keys.
func TestNewChecksKeysAgainstStore(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) paykit.Store{
		"memory":   func(*testing.T) paykit.Store { return memory.New() },
		"sqlite":   func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, paykittest.SQLite) },
		"postgres": func(t *testing.T) paykit.Store { return paykittest.OpenStore(t, paykittest.Postgres) },
	}
	signing := bytes.Repeat([]byte("s"), 32)
	k1 := bytes.Repeat([]byte{1}, 32)
	k2 := bytes.Repeat([]byte{2}, 32)
	ring := func(active string, keys map[string][]byte) *keyring.Keyring {
		k, err := keyring.New(active, keys)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			start := func(signing []byte, accounts *keyring.Keyring) error {
				_, err := paykit.New(paykit.Config{Store: store, SigningKey: signing, AccountKeys: accounts})
				return err
			}
			is := is.New(t)
			is.NoErr(start(signing, ring("k1", map[string][]byte{"k1": k1}))) // first start records the keys
			is.NoErr(start(signing, ring("k1", map[string][]byte{"k1": k1}))) // a restart with the same keys

			for _, c := range []struct {
				name     string
				signing  []byte
				accounts *keyring.Keyring
				says     string
			}{
				{"other signing key", bytes.Repeat([]byte("t"), 32), ring("k1", map[string][]byte{"k1": k1}), "Config.SigningKey"},
				{"other bytes under k1", signing, ring("k1", map[string][]byte{"k1": k2}), `key "k1" is not the key`},
				{"k1 dropped for a new key", signing, ring("k2", map[string][]byte{"k2": k2}), `has no key "k1"`},
			} {
				err := start(c.signing, c.accounts)
				is.True(errors.Is(err, keyring.ErrMismatch)) // c.name
				is.True(strings.Contains(err.Error(), c.says))
				for _, key := range [][]byte{signing, k1, k2, c.signing} {
					is.True(!strings.Contains(err.Error(), hex.EncodeToString(key))) // no key in the message
				}
			}
			// Rotation: k2 seals, k1 stays to open what it sealed.
			is.NoErr(start(signing, ring("k2", map[string][]byte{"k1": k1, "k2": k2})))
			is.NoErr(start(signing, ring("k2", map[string][]byte{"k1": k1, "k2": k2})))
			// k2 has sealed since: dropping it is refused too.
			err := start(signing, ring("k1", map[string][]byte{"k1": k1}))
			is.True(errors.Is(err, keyring.ErrMismatch))
			is.True(strings.Contains(err.Error(), `has no key "k2"`))
		})
	}
}
