package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"

	"github.com/paykit/paykit/keyring"
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
// beside a SQLite database. For PostgreSQL there is none: the keys live in
// the database wrapped under PAYKIT_KEY_ENCRYPTION_KEY (see loadDBKeys), so
// that every instance on it shares them; for the in-memory store too (its
// data dies with it, and so may its keys).
func defaultKeysPath(db string) string {
	if strings.HasPrefix(db, "sqlite:") && db != "sqlite::memory:" {
		return strings.TrimPrefix(db, "sqlite:") + ".keys"
	}
	return ""
}

// newKeyFile draws fresh keys.
func newKeyFile() (keyFile, error) {
	kf := keyFile{SigningKey: make([]byte, 32), ActiveAccount: "k1", AccountKeys: map[string][]byte{"k1": make([]byte, 32)}}
	if _, err := rand.Read(kf.SigningKey); err != nil {
		return kf, err
	}
	_, err := rand.Read(kf.AccountKeys["k1"])
	return kf, err
}

// keys turns a key file's contents into the Service's keys.
func (kf keyFile) keys(source string) ([]byte, *keyring.Keyring, error) {
	if len(kf.SigningKey) < 32 {
		return nil, nil, fmt.Errorf("%s: signing_key must be at least 32 bytes", source)
	}
	accounts, err := keyring.New(kf.ActiveAccount, kf.AccountKeys)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	return kf.SigningKey, accounts, nil
}

// serverKeysTable keeps the keys of a PostgreSQL deployment started
// without -keys: one row, written by the first instance to start, holding
// the keys wrapped under PAYKIT_KEY_ENCRYPTION_KEY (or, with -keys-in-db,
// in clear).
const serverKeysTable = "paykit_server_keys"

// keyEncryptionKeyEnv is the environment variable of the key that wraps
// the keys kept in the database: 32 random bytes, base64. It is read from
// the environment only, never from the command line, where other users of
// the machine could see it.
const keyEncryptionKeyEnv = "PAYKIT_KEY_ENCRYPTION_KEY"

// storedKeys is the row of serverKeysTable: a keyFile whose keys are
// wrapped (see wrapKeys) when Wrapped is set, with the fingerprint of the
// key encryption key that wrapped them.
type storedKeys struct {
	keyFile
	Wrapped bool   `json:"wrapped,omitempty"`
	KEK     string `json:"kek_fingerprint,omitempty"`
}

// wrapSigningID is the id the signing key is wrapped under; account keys
// are wrapped under their own ids.
const wrapSigningID = "signing"

// wrapKeys returns kf with every key wrapped by w.
func wrapKeys(kf keyFile, w *keyring.LocalWrapper) (keyFile, error) {
	out := keyFile{ActiveAccount: kf.ActiveAccount, AccountKeys: map[string][]byte{}}
	var err error
	if out.SigningKey, err = w.WrapKey(wrapSigningID, kf.SigningKey); err != nil {
		return out, err
	}
	for id, key := range kf.AccountKeys {
		if out.AccountKeys[id], err = w.WrapKey(id, key); err != nil {
			return out, err
		}
	}
	return out, nil
}

// unwrapKeys is the server's keys from wrapped ones: the account keys go
// through keyring.Unwrap, the library's hook for a KMS.
func unwrapKeys(ctx context.Context, kf keyFile, w *keyring.LocalWrapper) ([]byte, *keyring.Keyring, error) {
	signing, err := w.UnwrapKey(ctx, wrapSigningID, kf.SigningKey)
	if err != nil {
		return nil, nil, err
	}
	accounts, err := keyring.Unwrap(ctx, w, kf.ActiveAccount, kf.AccountKeys)
	if err != nil {
		return nil, nil, err
	}
	if len(signing) < 32 {
		return nil, nil, errors.New("signing_key must be at least 32 bytes")
	}
	return signing, accounts, nil
}

// keyWrapper reads PAYKIT_KEY_ENCRYPTION_KEY: nil when it is unset.
func keyWrapper(getenv func(string) string) (*keyring.LocalWrapper, error) {
	v := strings.TrimSpace(getenv(keyEncryptionKeyEnv))
	if v == "" {
		return nil, nil
	}
	kek, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(kek) != 32 {
		// The value is a secret: not echoed.
		return nil, fmt.Errorf("%s must be 32 random bytes in base64 (openssl rand -base64 32)", keyEncryptionKeyEnv)
	}
	return keyring.NewLocalWrapper(kek)
}

// loadDBKeys reads the keys kept in the database, storing fresh ones on
// first start; concurrent first starts agree on one set. With w the keys
// are kept wrapped under it (keys found in clear, from before, are wrapped
// in place); without w (-keys-in-db) they are kept in clear, which a WARN
// says at every start, since a dump of the database then holds them.
func loadDBKeys(ctx context.Context, db *bun.DB, w *keyring.LocalWrapper, logger *slog.Logger) ([]byte, *keyring.Keyring, error) {
	fresh, err := newKeyFile()
	if err != nil {
		return nil, nil, err
	}
	row := storedKeys{keyFile: fresh}
	if w != nil {
		if row.keyFile, err = wrapKeys(fresh, w); err != nil {
			return nil, nil, err
		}
		row.Wrapped, row.KEK = true, w.Fingerprint()
	}
	blob, _ := json.Marshal(row)
	var stored storedKeys
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Serializes concurrent first starts (CREATE TABLE IF NOT EXISTS races on PostgreSQL).
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", serverKeysLockID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+serverKeysTable+
			" (id INTEGER PRIMARY KEY, keys TEXT NOT NULL)"); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO "+serverKeysTable+" (id, keys) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", string(blob))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			logger.InfoContext(ctx, "generated signing and account keys and stored them in the database", "wrapped", w != nil)
		}
		var text string
		if err := tx.NewRaw("SELECT keys FROM "+serverKeysTable+" WHERE id = 1").Scan(ctx, &text); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(text), &stored); err != nil {
			return err
		}
		if stored.Wrapped || w == nil {
			return nil
		}
		// Kept in clear before: wrapped from now on.
		wrapped, err := wrapKeys(stored.keyFile, w)
		if err != nil {
			return err
		}
		plain := stored.keyFile
		stored = storedKeys{keyFile: wrapped, Wrapped: true, KEK: w.Fingerprint()}
		blob, _ := json.Marshal(stored)
		if _, err := tx.ExecContext(ctx, "UPDATE "+serverKeysTable+" SET keys = ? WHERE id = 1", string(blob)); err != nil {
			return err
		}
		logger.InfoContext(ctx, "wrapped the keys kept in clear in the database under "+keyEncryptionKeyEnv)
		stored.keyFile = plain // the keys are the same
		stored.Wrapped = false
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("keys in the database: %w", err)
	}
	switch {
	case !stored.Wrapped && w == nil:
		logger.WarnContext(ctx, "-keys-in-db: the signing and account keys are kept IN CLEAR in the database, beside the data they protect; "+
			"a dump of it holds both. For demos only: set "+keyEncryptionKeyEnv+" or pass -keys FILE")
		return stored.keys("keys in the database")
	case !stored.Wrapped:
		return stored.keys("keys in the database")
	case w == nil:
		return nil, nil, fmt.Errorf("the keys in the database are wrapped: set %s to the key that wrapped them", keyEncryptionKeyEnv)
	case stored.KEK != w.Fingerprint():
		return nil, nil, fmt.Errorf("%s is not the key that wrapped the keys in the database", keyEncryptionKeyEnv)
	}
	signing, accounts, err := unwrapKeys(ctx, stored.keyFile, w)
	if err != nil {
		return nil, nil, fmt.Errorf("keys in the database: %w", err)
	}
	return signing, accounts, nil
}

// serverKeysLockID is the PostgreSQL advisory lock of loadDBKeys.
const serverKeysLockID = 0x706b6b657973 // "pkkeys"

// legacyKeysFile is where a PostgreSQL server kept its keys before they
// moved into the database; when it exists, it is still used.
const legacyKeysFile = "paykit.keys"

// loadKeys reads the key file at path, creating it (mode 0600) with fresh
// keys when it does not exist; when another process creates it first, its
// keys are read. An empty path gives fresh keys that are not kept.
func loadKeys(path string) (signing []byte, accounts *keyring.Keyring, err error) {
	if path == "" {
		kf, err := newKeyFile()
		if err != nil {
			return nil, nil, err
		}
		return kf.keys("fresh keys")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKeyFile(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("key file: %w", err)
		}
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("key file: %w", err)
	}
	var kf keyFile
	if err := json.Unmarshal(data, &kf); err != nil {
		return nil, nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return kf.keys("key file " + path)
}

// createKeyFile writes fresh keys to a new file at path (mode 0600): it
// fails with fs.ErrExist when the file is there already. The keys are
// written to a temporary file first and linked into place, so a reader
// never sees a partial file.
func createKeyFile(path string) error {
	kf, err := newKeyFile()
	if err != nil {
		return err
	}
	out, _ := json.MarshalIndent(kf, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path) // fails with fs.ErrExist if another start won
}

// defaultKEKPath is where a PostgreSQL database's key-encryption key is
// kept when PAYKIT_KEY_ENCRYPTION_KEY is not set: a file in the user's
// configuration directory, named for the database (its URL without the
// password), so every instance on this machine finds the same one.
func defaultKEKPath(dsn string, getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("no place for the key-encryption key (set %s): %w", keyEncryptionKeyEnv, err)
		}
	}
	name := dsn
	if u, err := url.Parse(dsn); err == nil {
		u.User = url.User(u.User.Username())
		name = u.String()
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(dir, "paykit", "kek-"+hex.EncodeToString(sum[:8])), nil
}

// machineKeyWrapper reads the key-encryption key file at path, creating it
// (32 random bytes, base64, mode 0600 as CreateTemp makes it) when missing;
// instances starting at once agree on the first one linked.
func machineKeyWrapper(path string) (*keyring.LocalWrapper, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("key-encryption key: %w", err)
	}
	kek := make([]byte, 32)
	if _, err := rand.Read(kek); err != nil {
		return nil, err
	}
	// Written whole to a temporary file, then linked into place: a
	// concurrent start reads either no file or a complete one.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kek-*")
	if err != nil {
		return nil, fmt.Errorf("key-encryption key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(kek) + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("key-encryption key: %w", werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("key-encryption key: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key-encryption key: %w", err)
	}
	return keyWrapper(func(string) string { return string(b) })
}
