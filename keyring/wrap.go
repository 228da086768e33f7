package paykit

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
)

// KeyUnwrapper turns a wrapped (encrypted) data key back into its bytes.
// It is the hook for a key management service: the host implements it with
// its KMS's decrypt call (AWS KMS Decrypt, Google Cloud KMS Decrypt, Vault
// transit decrypt, ...), so that the keys kept beside the data are only
// ever wrapped and the key that unwraps them never leaves the KMS. paykit
// depends on no KMS SDK. UnwrapKey is called once per key, at start, by
// UnwrapKeyring.
type KeyUnwrapper interface {
	UnwrapKey(ctx context.Context, keyID string, wrapped []byte) ([]byte, error)
}

// UnwrapKeyring builds a Keyring from wrapped 32-byte data keys by id,
// unwrapping each with u; activeID seals. A key that does not unwrap fails
// it, naming the key id (never the key).
func UnwrapKeyring(ctx context.Context, u KeyUnwrapper, activeID string, wrapped map[string][]byte) (*Keyring, error) {
	keys := make(map[string][]byte, len(wrapped))
	for id, w := range wrapped {
		key, err := u.UnwrapKey(ctx, id, w)
		if err != nil {
			return nil, fmt.Errorf("paykit: unwrapping account key %q: %w", id, err)
		}
		keys[id] = key
	}
	return NewKeyring(activeID, keys)
}

// LocalKeyWrapper wraps and unwraps data keys with AES-256-GCM under a key
// encryption key the host keeps outside the database (an environment
// variable, a file, a secret manager). It is a KeyUnwrapper for hosts
// without a KMS; the key id is bound to the wrapped key, so a wrapped key
// cannot be passed off under another id.
type LocalKeyWrapper struct {
	aead  cipher.AEAD
	print string // KeyFingerprint of the key encryption key
}

// NewLocalKeyWrapper returns a LocalKeyWrapper under the 32-byte kek.
func NewLocalKeyWrapper(kek []byte) (*LocalKeyWrapper, error) {
	if len(kek) != 32 {
		return nil, fmt.Errorf("paykit: a key encryption key is 32 bytes, not %d", len(kek))
	}
	aead, err := newGCM(kek)
	if err != nil {
		return nil, err
	}
	return &LocalKeyWrapper{aead: aead, print: KeyFingerprint(kek)}, nil
}

// WrapKey encrypts key under the key encryption key, bound to keyID.
func (w *LocalKeyWrapper) WrapKey(keyID string, key []byte) ([]byte, error) {
	nonce := make([]byte, w.aead.NonceSize(), w.aead.NonceSize()+len(key)+w.aead.Overhead())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, err
	}
	return w.aead.Seal(nonce, nonce, key, []byte(keyID)), nil
}

// UnwrapKey decrypts what WrapKey returned for keyID.
func (w *LocalKeyWrapper) UnwrapKey(_ context.Context, keyID string, wrapped []byte) ([]byte, error) {
	n := w.aead.NonceSize()
	if len(wrapped) < n {
		return nil, errCiphertext
	}
	key, err := w.aead.Open(nil, wrapped[:n], wrapped[n:], []byte(keyID))
	if err != nil {
		return nil, fmt.Errorf("paykit: key %q does not unwrap under this key encryption key", keyID)
	}
	return key, nil
}

// Fingerprint is KeyFingerprint of the key encryption key: it tells which
// key wrapped a stored key without revealing it.
func (w *LocalKeyWrapper) Fingerprint() string { return w.print }
