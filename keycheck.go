package paykit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/paykit/paykit/keyring"
)

// Key ids of the fingerprints in the Store.
const (
	signingKeyCheckID = "signing"
	accountKeyCheckID = "account:" // + the Keyring's key id
)

// keyCheckTimeout bounds New's round trip to the Store.
const keyCheckTimeout = 30 * time.Second

// checkStoredKeys compares the configured keys with the fingerprints the
// Store recorded, recording the signing key's and the active account
// key's when they are new. It fails when a recorded key is configured with
// other bytes, or when an account key that may have sealed stored data is
// missing from the keyring: old keys stay in it, decrypt-only, after a
// rotation. Randomly drawn keys (none configured) are not checked.
func checkStoredKeys(ctx context.Context, cfg Config, now time.Time) error {
	record := map[string]string{}
	configured := map[string]string{}
	if len(cfg.SigningKey) > 0 {
		fp := keyring.Fingerprint(cfg.SigningKey)
		record[signingKeyCheckID], configured[signingKeyCheckID] = fp, fp
	}
	if cfg.AccountKeys != nil {
		for id, fp := range cfg.AccountKeys.Fingerprints() {
			configured[accountKeyCheckID+id] = fp
		}
		active := accountKeyCheckID + cfg.AccountKeys.Active()
		record[active] = configured[active]
	}
	if len(record) == 0 {
		return nil
	}
	stored, err := cfg.Store.RecordKeyChecks(ctx, record, now)
	if err != nil {
		return fmt.Errorf("paykit: checking the configured keys against the Store: %w", err)
	}
	ids := make([]string, 0, len(stored))
	for id := range stored {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var problems []string
	for _, id := range ids {
		have, ok := configured[id]
		switch {
		case id == signingKeyCheckID && len(cfg.SigningKey) == 0,
			strings.HasPrefix(id, accountKeyCheckID) && cfg.AccountKeys == nil:
			// Not configured: drawn at random, nothing to compare.
		case id == signingKeyCheckID && have != stored[id]:
			problems = append(problems, "Config.SigningKey is not the signing key the Store's cursors and payer links were made with")
		case strings.HasPrefix(id, accountKeyCheckID) && !ok:
			problems = append(problems, fmt.Sprintf("Config.AccountKeys has no key %q, which sealed stored account numbers and webhook secrets (keep old keys in the keyring after a rotation)",
				strings.TrimPrefix(id, accountKeyCheckID)))
		case strings.HasPrefix(id, accountKeyCheckID) && have != stored[id]:
			problems = append(problems, fmt.Sprintf("Config.AccountKeys key %q is not the key of that id that sealed stored account numbers and webhook secrets",
				strings.TrimPrefix(id, accountKeyCheckID)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", keyring.ErrMismatch, strings.Join(problems, "; "))
	}
	return nil
}
