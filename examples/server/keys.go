package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

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
// beside a SQLite database. For PostgreSQL there is none: the keys live in
// the database (see loadDBKeys), so that every instance on it shares them;
// for the in-memory store too (its data dies with it, and so may its keys).
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
func (kf keyFile) keys(source string) ([]byte, *paykit.Keyring, error) {
	if len(kf.SigningKey) < 32 {
		return nil, nil, fmt.Errorf("%s: signing_key must be at least 32 bytes", source)
	}
	accounts, err := paykit.NewKeyring(kf.ActiveAccount, kf.AccountKeys)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", source, err)
	}
	return kf.SigningKey, accounts, nil
}

// serverKeysTable keeps the keys of a PostgreSQL deployment started
// without -keys: one row, written by the first instance to start.
const serverKeysTable = "paykit_server_keys"

// loadDBKeys reads the keys kept in the database, storing fresh ones on
// first start; concurrent first starts agree on one set. Keys beside the
// data they protect guard less than a separate -keys file (or a secret
// manager) does, which the log says once, when they are created.
func loadDBKeys(ctx context.Context, db *bun.DB, logger *slog.Logger) ([]byte, *paykit.Keyring, error) {
	fresh, err := newKeyFile()
	if err != nil {
		return nil, nil, err
	}
	blob, _ := json.Marshal(fresh)
	var stored string
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
			logger.WarnContext(ctx, "generated signing and account keys and stored them in the database; pass -keys FILE to keep them apart from the data")
		}
		return tx.NewRaw("SELECT keys FROM "+serverKeysTable+" WHERE id = 1").Scan(ctx, &stored)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("keys in the database: %w", err)
	}
	logger.WarnContext(ctx, "the signing and account keys are kept in the database, beside the data they protect; pass -keys FILE (the same on every instance) to keep them apart")
	var kf keyFile
	if err := json.Unmarshal([]byte(stored), &kf); err != nil {
		return nil, nil, fmt.Errorf("keys in the database: %w", err)
	}
	return kf.keys("keys in the database")
}

// serverKeysLockID is the PostgreSQL advisory lock of loadDBKeys and
// verifyKeys.
const serverKeysLockID = 0x706b6b657973 // "pkkeys"

// legacyKeysFile is where a PostgreSQL server kept its keys before they
// moved into the database; when it exists, it is still used.
const legacyKeysFile = "paykit.keys"

// keyCheck is what verifyKeys seals and signs.
const keyCheck = "paykit key check"

// verifyKeys refuses keys that are not the ones the database was first
// started with: under other keys, stored account numbers, webhook secrets,
// cursors and payer links would not open. The first start records an HMAC
// under the signing key and a value sealed with the account keyring; every
// later start checks both (a rotated keyring keeps the old key ids, so it
// still opens the check).
func verifyKeys(ctx context.Context, db *bun.DB, signing []byte, accounts *paykit.Keyring) error {
	h := hmac.New(sha256.New, signing)
	h.Write([]byte(keyCheck))
	mac := hex.EncodeToString(h.Sum(nil))
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if db.Dialect().Name() == dialect.PG {
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", serverKeysLockID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS paykit_key_check "+
			"(id INTEGER PRIMARY KEY, signing_mac TEXT NOT NULL, account_key_id TEXT NOT NULL, account_sealed TEXT NOT NULL)"); err != nil {
			return err
		}
		var storedMAC, keyID, sealed string
		err := tx.QueryRowContext(ctx, "SELECT signing_mac, account_key_id, account_sealed FROM paykit_key_check WHERE id = 1").
			Scan(&storedMAC, &keyID, &sealed)
		if errors.Is(err, sql.ErrNoRows) {
			id, box, err := accounts.Seal(keyCheck, keyCheck)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, "INSERT INTO paykit_key_check (id, signing_mac, account_key_id, account_sealed) VALUES (1, ?, ?, ?)",
				mac, id, base64.StdEncoding.EncodeToString(box))
			return err
		}
		if err != nil {
			return err
		}
		if !hmac.Equal([]byte(mac), []byte(storedMAC)) {
			return errors.New("its signing key is not the one this database was first started with; start with the original keys (-keys FILE)")
		}
		box, err := base64.StdEncoding.DecodeString(sealed)
		if err != nil {
			return err
		}
		if opened, err := accounts.Open(keyID, box, keyCheck); err != nil || opened != keyCheck {
			return fmt.Errorf("its account keys do not open what this database holds (key id %q); start with the original keys (-keys FILE), adding new ones beside them to rotate", keyID)
		}
		return nil
	})
}

// loadKeys reads the key file at path, creating it (mode 0600) with fresh
// keys when it does not exist; when another process creates it first, its
// keys are read. An empty path gives fresh keys that are not kept.
func loadKeys(path string) (signing []byte, accounts *paykit.Keyring, err error) {
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
