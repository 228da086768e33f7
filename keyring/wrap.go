package keyring

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
)

// Unwrapper turns a wrapped (encrypted) data key back into its bytes.
// It is the hook for a key management service: the host implements it with
// its KMS's decrypt call (AWS KMS Decrypt, Google Cloud KMS Decrypt, Vault
// transit decrypt, ...), so that the keys kept beside the data are only
// ever wrapped and the key that unwraps them never leaves the KMS. paykit
// depends on no KMS SDK. UnwrapKey is called once per key, at start, by
// Unwrap.
type Unwrapper interface {
	UnwrapKey(ctx context.Context, keyID string, wrapped []byte) ([]byte, error)
}

// Unwrap builds a Keyring from wrapped 32-byte data keys by id, unwrapping
// each with u; activeID seals. A key that does not unwrap fails it, naming
// the key id (never the key).
func Unwrap(ctx context.Context, u Unwrapper, activeID string, wrapped map[string][]byte) (*Keyring, error) {
	keys := make(map[string][]byte, len(wrapped))
	for id, w := range wrapped {
		key, err := u.UnwrapKey(ctx, id, w)
		if err != nil {
			return nil, fmt.Errorf("keyring: unwrapping account key %q: %w", id, err)
		}
		keys[id] = key
	}
	return New(activeID, keys)
}

// LocalWrapper wraps and unwraps data keys with AES-256-GCM under a key
// encryption key the host keeps outside the database (an environment
// variable, a file, a secret manager). It is an Unwrapper for hosts
// without a KMS; the key id is bound to the wrapped key, so a wrapped key
// cannot be passed off under another id.
type LocalWrapper struct {
	aead  cipher.AEAD
	print string // Fingerprint of the key encryption key
}

// NewLocalWrapper returns a LocalWrapper under the 32-byte kek.
func NewLocalWrapper(kek []byte) (*LocalWrapper, error) {
	if len(kek) != 32 {
		return nil, fmt.Errorf("keyring: a key encryption key is 32 bytes, not %d", len(kek))
	}
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	return &LocalWrapper{aead: aead, print: Fingerprint(kek)}, nil
}

// WrapKey encrypts key under the key encryption key, bound to keyID.
func (w *LocalWrapper) WrapKey(keyID string, key []byte) ([]byte, error) {
	nonce := make([]byte, w.aead.NonceSize(), w.aead.NonceSize()+len(key)+w.aead.Overhead())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, err
	}
	return w.aead.Seal(nonce, nonce, key, []byte(keyID)), nil
}

// UnwrapKey decrypts what WrapKey returned for keyID.
func (w *LocalWrapper) UnwrapKey(_ context.Context, keyID string, wrapped []byte) ([]byte, error) {
	n := w.aead.NonceSize()
	if len(wrapped) < n {
		return nil, errCiphertext
	}
	key, err := w.aead.Open(nil, wrapped[:n], wrapped[n:], []byte(keyID))
	if err != nil {
		return nil, fmt.Errorf("keyring: key %q does not unwrap under this key encryption key", keyID)
	}
	return key, nil
}

// Fingerprint returns the key encryption key's Fingerprint: it tells which
// key wrapped a stored key without revealing it.
func (w *LocalWrapper) Fingerprint() string { return w.print }
