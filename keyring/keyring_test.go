package keyring_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit/keyring"
)

func TestSealsAndRotates(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	old := bytes.Repeat([]byte{1}, 32)
	k1, err := keyring.New("k1", map[string][]byte{"k1": old})
	is.NoErr(err)
	id, sealed, err := k1.Seal("000123456789", "po_1")
	is.NoErr(err)
	is.Equal(id, "k1")
	is.True(!bytes.Contains(sealed, []byte("000123456789"))) // not stored in the clear
	_, again, _ := k1.Seal("000123456789", "po_1")
	is.True(!bytes.Equal(sealed, again)) // a fresh nonce every time

	// Rotation: a new active key seals; the old one still opens old data.
	k2, err := keyring.New("k2", map[string][]byte{"k1": old, "k2": bytes.Repeat([]byte{2}, 32)})
	is.NoErr(err)
	plain, err := k2.Open(id, sealed, "po_1")
	is.NoErr(err)
	is.Equal(plain, "000123456789")
	id2, _, _ := k2.Seal("x", "po_2")
	is.Equal(id2, "k2")

	_, err = k2.Open(id, sealed, "po_other") // bound to its record
	is.True(err != nil)
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	_, err = k2.Open(id, tampered, "po_1")
	is.True(err != nil)
	_, err = k2.Open("k9", sealed, "po_1")
	is.True(err != nil)
	_, err = keyring.New("k1", map[string][]byte{"k1": []byte("short")})
	is.True(err != nil)
	_, err = keyring.New("missing", map[string][]byte{"k1": old})
	is.True(err != nil)
}

// A wrapped data key unwraps only under its key encryption key and its
// own id; Unwrap builds a keyring that opens what the plain one
// sealed.
func TestUnwrap(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	kek := bytes.Repeat([]byte{7}, 32)
	w, err := keyring.NewLocalWrapper(kek)
	is.NoErr(err)
	key := bytes.Repeat([]byte{9}, 32)
	wrapped, err := w.WrapKey("k1", key)
	is.NoErr(err)
	is.True(!bytes.Contains(wrapped, key))
	ring, err := keyring.Unwrap(ctx, w, "k1", map[string][]byte{"k1": wrapped})
	is.NoErr(err)
	plain, err := keyring.New("k1", map[string][]byte{"k1": key})
	is.NoErr(err)
	id, sealed, err := plain.Seal("123456789012", "po_1")
	is.NoErr(err)
	opened, err := ring.Open(id, sealed, "po_1")
	is.NoErr(err)
	is.Equal(opened, "123456789012")

	_, err = keyring.Unwrap(ctx, w, "k2", map[string][]byte{"k2": wrapped}) // under another id
	is.True(err != nil)
	other, err := keyring.NewLocalWrapper(bytes.Repeat([]byte{8}, 32))
	is.NoErr(err)
	_, err = keyring.Unwrap(ctx, other, "k1", map[string][]byte{"k1": wrapped}) // another KEK
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), `"k1"`))
	_, err = keyring.NewLocalWrapper(kek[:16])
	is.True(err != nil)
}
