package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/paykit/paykit"
)

// keyFile is the JSON file that keeps the server's secrets across restarts:
// the key that signs payer links and list cursors, and the AES-256 keys
// that encrypt recipient account numbers at rest. To rotate the account
// key, add a key under a new id and make it active; the old ids stay so
// that what they sealed can still be opened.
type keyFile struct {
	SigningKey    []byte            `json:"signing_key"`
	ActiveAccount string            `json:"active_account_key"`
	AccountKeys   map[string][]byte `json:"account_keys"`
}

// defaultKeysPath is where the key file lives when -keys is not given:
// beside a SQLite database, paykit.keys in the working directory for
// PostgreSQL, nowhere for the in-memory store (its data dies with it).
func defaultKeysPath(db string) string {
	switch {
	case db == "memory":
		return ""
	case strings.HasPrefix(db, "sqlite:"):
		return strings.TrimPrefix(db, "sqlite:") + ".keys"
	}
	return "paykit.keys"
}

// loadKeys reads the key file at path, creating it (mode 0600) with fresh
// keys when it does not exist. An empty path gives fresh keys that are not
// kept.
func loadKeys(path string) (signing []byte, accounts *paykit.Keyring, err error) {
	var kf keyFile
	data, err := os.ReadFile(path)
	switch {
	case path == "" || errors.Is(err, fs.ErrNotExist):
		kf = keyFile{SigningKey: make([]byte, 32), ActiveAccount: "k1", AccountKeys: map[string][]byte{"k1": make([]byte, 32)}}
		if _, err := rand.Read(kf.SigningKey); err != nil {
			return nil, nil, err
		}
		if _, err := rand.Read(kf.AccountKeys["k1"]); err != nil {
			return nil, nil, err
		}
		if path != "" {
			out, _ := json.MarshalIndent(kf, "", "  ")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return nil, nil, fmt.Errorf("key file: %w", err)
			}
			if _, err := f.Write(append(out, '\n')); err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("key file: %w", err)
			}
			if err := f.Close(); err != nil {
				return nil, nil, fmt.Errorf("key file: %w", err)
			}
		}
	case err != nil:
		return nil, nil, fmt.Errorf("key file: %w", err)
	default:
		if err := json.Unmarshal(data, &kf); err != nil {
			return nil, nil, fmt.Errorf("key file %s: %w", path, err)
		}
		if len(kf.SigningKey) < 32 {
			return nil, nil, fmt.Errorf("key file %s: signing_key must be at least 32 bytes", path)
		}
	}
	accounts, err = paykit.NewKeyring(kf.ActiveAccount, kf.AccountKeys)
	if err != nil {
		return nil, nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return kf.SigningKey, accounts, nil
}
