package paykit

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// Keyring encrypts recipient account numbers at rest with AES-256-GCM.
// New data is sealed with the active key; every key stays usable for
// opening, so keys rotate by adding a new active key and keeping the old.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
	prints map[string]string // KeyFingerprint by key id
}

// NewKeyring builds a keyring from 32-byte keys by id; activeID seals.
func NewKeyring(activeID string, keys map[string][]byte) (*Keyring, error) {
	k := &Keyring{active: activeID, aeads: map[string]cipher.AEAD{}, prints: map[string]string{}}
	for id, key := range keys {
		if len(key) != 32 {
			return nil, fmt.Errorf("paykit: key %q is %d bytes, AES-256 needs 32", id, len(key))
		}
		aead, err := newGCM(key)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		k.prints[id] = KeyFingerprint(key)
	}
	if _, ok := k.aeads[activeID]; !ok {
		return nil, fmt.Errorf("paykit: active key %q is not in the keyring", activeID)
	}
	return k, nil
}

// newGCM is AES-GCM under key.
func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// RandomKeyring returns a keyring with one fresh key: what it seals cannot
// be opened after the process ends. For tests and in-memory stores.
func RandomKeyring() *Keyring {
	key := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		panic("paykit: crypto/rand failed: " + err.Error())
	}
	k, _ := NewKeyring("ephemeral", map[string][]byte{"ephemeral": key})
	return k
}

// Seal encrypts plaintext bound to aad (the owning record's id) and returns
// the key id used and nonce||ciphertext.
func (k *Keyring) Seal(plaintext, aad string) (string, []byte, error) {
	aead := k.aeads[k.active]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return "", nil, err
	}
	return k.active, aead.Seal(nonce, nonce, []byte(plaintext), []byte(aad)), nil
}

var errCiphertext = errors.New("paykit: ciphertext cannot be opened")

// Open decrypts what Seal returned, with the key it names.
func (k *Keyring) Open(keyID string, sealed []byte, aad string) (string, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return "", fmt.Errorf("paykit: no key %q in the keyring", keyID)
	}
	if len(sealed) < aead.NonceSize() {
		return "", errCiphertext
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(aad))
	if err != nil {
		return "", errCiphertext
	}
	return string(plain), nil
}
