// Package keyring holds the keys paykit encrypts data at rest with
// (paykit.Config.AccountKeys): a Keyring of AES-256-GCM keys by id, built
// from plain keys (New), drawn at random (Random) or unwrapped at start
// through a key management service (Unwrap, Unwrapper, LocalWrapper).
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
)

// Keyring encrypts recipient account numbers and webhook secrets at rest
// with AES-256-GCM. New data is sealed with the active key; every key stays
// usable for opening, so keys rotate by adding a new active key and keeping
// the old.
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
	prints map[string]string // Fingerprint by key id
}

// New builds a keyring from 32-byte keys by id; activeID seals.
func New(activeID string, keys map[string][]byte) (*Keyring, error) {
	k := &Keyring{active: activeID, aeads: map[string]cipher.AEAD{}, prints: map[string]string{}}
	for id, key := range keys {
		if len(key) != 32 {
			return nil, fmt.Errorf("keyring: key %q is %d bytes, AES-256 needs 32", id, len(key))
		}
		aead, err := newGCM(key)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		k.prints[id] = Fingerprint(key)
	}
	if _, ok := k.aeads[activeID]; !ok {
		return nil, fmt.Errorf("keyring: active key %q is not in the keyring", activeID)
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

// Random returns a keyring with one fresh key: what it seals cannot be
// opened after the process ends. For tests and in-memory stores.
func Random() *Keyring {
	key := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		panic("keyring: crypto/rand failed: " + err.Error())
	}
	k, _ := New("ephemeral", map[string][]byte{"ephemeral": key})
	return k
}

// Active returns the id of the key that seals.
func (k *Keyring) Active() string { return k.active }

// Fingerprints returns the Fingerprint of every key by key id.
func (k *Keyring) Fingerprints() map[string]string { return maps.Clone(k.prints) }

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

var errCiphertext = errors.New("keyring: ciphertext cannot be opened")

// Open decrypts what Seal returned, with the key it names.
func (k *Keyring) Open(keyID string, sealed []byte, aad string) (string, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return "", fmt.Errorf("keyring: no key %q in the keyring", keyID)
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

// fingerprintLabel is what a key fingerprint authenticates.
const fingerprintLabel = "paykit key check v1"

// Fingerprint is the non-secret check of a key that paykit.New records in
// the Store: the hex HMAC-SHA256 of a fixed label under key. It tells keys
// apart without revealing them.
func Fingerprint(key []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(fingerprintLabel))
	return hex.EncodeToString(h.Sum(nil))
}

// ErrMismatch is returned (wrapped) by paykit.New when the configured keys
// (Config.SigningKey, Config.AccountKeys) are not the ones the Store's data
// was written with.
var ErrMismatch = errors.New("paykit: the configured keys cannot read the stored data")
