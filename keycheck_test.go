package paykit_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
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
	keyring := func(active string, keys map[string][]byte) *paykit.Keyring {
		k, err := paykit.NewKeyring(active, keys)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			start := func(signing []byte, accounts *paykit.Keyring) error {
				_, err := paykit.New(paykit.Config{Store: store, SigningKey: signing, AccountKeys: accounts})
				return err
			}
			is := is.New(t)
			is.NoErr(start(signing, keyring("k1", map[string][]byte{"k1": k1}))) // first start records the keys
			is.NoErr(start(signing, keyring("k1", map[string][]byte{"k1": k1}))) // a restart with the same keys

			for _, c := range []struct {
				name     string
				signing  []byte
				accounts *paykit.Keyring
				says     string
			}{
				{"other signing key", bytes.Repeat([]byte("t"), 32), keyring("k1", map[string][]byte{"k1": k1}), "Config.SigningKey"},
				{"other bytes under k1", signing, keyring("k1", map[string][]byte{"k1": k2}), `key "k1" is not the key`},
				{"k1 dropped for a new key", signing, keyring("k2", map[string][]byte{"k2": k2}), `has no key "k1"`},
			} {
				err := start(c.signing, c.accounts)
				is.True(errors.Is(err, paykit.ErrKeyMismatch)) // c.name
				is.True(strings.Contains(err.Error(), c.says))
				for _, key := range [][]byte{signing, k1, k2, c.signing} {
					is.True(!strings.Contains(err.Error(), hex.EncodeToString(key))) // no key in the message
				}
			}
			// Rotation: k2 seals, k1 stays to open what it sealed.
			is.NoErr(start(signing, keyring("k2", map[string][]byte{"k1": k1, "k2": k2})))
			is.NoErr(start(signing, keyring("k2", map[string][]byte{"k1": k1, "k2": k2})))
			// k2 has sealed since: dropping it is refused too.
			err := start(signing, keyring("k1", map[string][]byte{"k1": k1}))
			is.True(errors.Is(err, paykit.ErrKeyMismatch))
			is.True(strings.Contains(err.Error(), `has no key "k2"`))
		})
	}
}

// A wrapped data key unwraps only under its key encryption key and its
// own id; UnwrapKeyring builds a keyring that opens what the plain one
// sealed.
func TestUnwrapKeyring(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	kek := bytes.Repeat([]byte{7}, 32)
	w, err := paykit.NewLocalKeyWrapper(kek)
	is.NoErr(err)
	key := bytes.Repeat([]byte{9}, 32)
	wrapped, err := w.WrapKey("k1", key)
	is.NoErr(err)
	is.True(!bytes.Contains(wrapped, key))
	ring, err := paykit.UnwrapKeyring(ctx, w, "k1", map[string][]byte{"k1": wrapped})
	is.NoErr(err)
	plain, err := paykit.NewKeyring("k1", map[string][]byte{"k1": key})
	is.NoErr(err)
	id, sealed, err := plain.Seal("123456789012", "po_1")
	is.NoErr(err)
	opened, err := ring.Open(id, sealed, "po_1")
	is.NoErr(err)
	is.Equal(opened, "123456789012")

	_, err = paykit.UnwrapKeyring(ctx, w, "k2", map[string][]byte{"k2": wrapped}) // under another id
	is.True(err != nil)
	other, err := paykit.NewLocalKeyWrapper(bytes.Repeat([]byte{8}, 32))
	is.NoErr(err)
	_, err = paykit.UnwrapKeyring(ctx, other, "k1", map[string][]byte{"k1": wrapped}) // another KEK
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), `"k1"`))
	_, err = paykit.NewLocalKeyWrapper(kek[:16])
	is.True(err != nil)
}
