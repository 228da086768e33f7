package paykit_test

import (
	"bytes"
	"testing"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
)

func TestKeyringSealsAndRotates(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	old := bytes.Repeat([]byte{1}, 32)
	k1, err := paykit.NewKeyring("k1", map[string][]byte{"k1": old})
	is.NoErr(err)
	id, sealed, err := k1.Seal("000123456789", "po_1")
	is.NoErr(err)
	is.Equal(id, "k1")
	is.True(!bytes.Contains(sealed, []byte("000123456789"))) // not stored in the clear
	_, again, _ := k1.Seal("000123456789", "po_1")
	is.True(!bytes.Equal(sealed, again)) // a fresh nonce every time

	// Rotation: a new active key seals; the old one still opens old data.
	k2, err := paykit.NewKeyring("k2", map[string][]byte{"k1": old, "k2": bytes.Repeat([]byte{2}, 32)})
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
	_, err = paykit.NewKeyring("k1", map[string][]byte{"k1": []byte("short")})
	is.True(err != nil)
	_, err = paykit.NewKeyring("missing", map[string][]byte{"k1": old})
	is.True(err != nil)
}
