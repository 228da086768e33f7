package paykit

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paykit/paykit/internal/wire"
)

// Merchant is an account that owns API keys and resources.
type Merchant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKey is a merchant's key pair. Only a hash of the secret is kept.
type APIKey struct {
	ID          string
	MerchantID  string
	Environment Environment
	PublicKey   string
	SecretHash  string // hex SHA-256 of the secret key
	SecretLast4 string // for display only
	CreatedAt   time.Time
	RevokedAt   *time.Time
	Version     int64
}

// Key prefixes; the public key's prefix fixes the environment.
const (
	publicKeyPrefixTest = "pk_test_"
	publicKeyPrefixLive = "pk_live_"
	secretKeyPrefixTest = "sk_test_"
	secretKeyPrefixLive = "sk_live_"
)

// keyEntropy is the number of random bytes behind every key.
const keyEntropy = 32

// NewAPIKey is a freshly issued key pair; SecretKey is shown only here.
type NewAPIKey struct {
	APIKey
	SecretKey string
}

// CreateMerchant creates a merchant on behalf of an operator (actor).
func (s *Service) CreateMerchant(ctx context.Context, actor, name string) (*Merchant, error) {
	name, err := merchantName(name)
	if err != nil {
		return nil, err
	}
	m := &Merchant{ID: s.newID("mch"), Name: name, CreatedAt: s.Now()}
	if err := s.inTx(ctx, func(tx Tx) error { return s.createMerchant(ctx, tx, actor, m) }); err != nil {
		return nil, internalError(err)
	}
	return m, nil
}

// EnsureMerchant creates, on behalf of actor, the merchant with the host's
// own id unless one with that id exists; created says which. A host that
// keeps its own merchant ids (or a demo set-up run at every start) calls it
// safely from several instances at once: one creates, the others find it.
// An id is 1 to 64 letters, digits, '_' or '-'.
func (s *Service) EnsureMerchant(ctx context.Context, actor, id, name string) (m *Merchant, created bool, err error) {
	if !validMerchantID(id) {
		return nil, false, invalidRequest("id", "id must be 1 to 64 letters, digits, '_' or '-'.")
	}
	if name, err = merchantName(name); err != nil {
		return nil, false, err
	}
	err = s.inTx(ctx, func(tx Tx) error {
		cur, err := tx.GetMerchant(ctx, id)
		if err == nil {
			m, created = cur, false
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		m, created = &Merchant{ID: id, Name: name, CreatedAt: s.Now()}, true
		return s.createMerchant(ctx, tx, actor, m)
	})
	if errors.Is(err, ErrAlreadyExists) { // another instance created it meanwhile
		cur, gerr := s.store.GetMerchant(ctx, id)
		if gerr != nil {
			return nil, false, internalError(gerr)
		}
		return cur, false, nil
	}
	if err != nil {
		return nil, false, internalError(err)
	}
	return m, created, nil
}

// createMerchant writes m and its audit row in tx.
func (s *Service) createMerchant(ctx context.Context, tx Tx, actor string, m *Merchant) error {
	if err := tx.CreateMerchant(ctx, m); err != nil {
		return err
	}
	return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "merchant.create", TargetType: "merchant", TargetID: m.ID, MerchantID: m.ID, Details: map[string]string{"name": m.Name}})
}

// merchantName trims and checks a merchant's name.
func merchantName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 256 {
		return "", invalidRequest("name", "name must be 1 to 256 characters.")
	}
	if !wire.ValidText(name) {
		return "", invalidRequest("name", "name must be UTF-8 text without NUL characters.")
	}
	return name, nil
}

// validMerchantID accepts 1 to 64 ASCII letters, digits, '_' and '-'.
func validMerchantID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// GetMerchant returns a merchant or not_found.
func (s *Service) GetMerchant(ctx context.Context, id string) (*Merchant, error) {
	m, err := s.store.GetMerchant(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("merchant")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return m, nil
}

// ListMerchants returns every merchant, newest first, in the projection
// CreateMerchant and GetMerchant answer.
func (s *Service) ListMerchants(ctx context.Context, p PageParams) (*Page[Merchant], error) {
	limit, after, err := s.pageQuery("merchant", p)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.ListMerchants(ctx, after, limit+1)
	if err != nil {
		return nil, internalError(err)
	}
	return makePage(s, "merchant", rows, limit, func(m *Merchant) Position { return Position{m.CreatedAt, m.ID} }), nil
}

// CreateAPIKey issues a key pair for a merchant and environment. The secret
// is returned once and only its hash is stored.
func (s *Service) CreateAPIKey(ctx context.Context, actor, merchantID string, env Environment) (*NewAPIKey, error) {
	if !env.Valid() {
		return nil, invalidRequest("environment", "environment must be test or live.")
	}
	pub, err := s.randomToken()
	if err != nil {
		return nil, internalError(err)
	}
	secret, err := s.randomToken()
	if err != nil {
		return nil, internalError(err)
	}
	pkPrefix, skPrefix := publicKeyPrefixTest, secretKeyPrefixTest
	if env == Live {
		pkPrefix, skPrefix = publicKeyPrefixLive, secretKeyPrefixLive
	}
	out := &NewAPIKey{SecretKey: skPrefix + secret}
	out.APIKey = APIKey{
		ID: s.newID("key"), MerchantID: merchantID, Environment: env,
		PublicKey: pkPrefix + pub, SecretHash: hashSecret(out.SecretKey),
		SecretLast4: out.SecretKey[len(out.SecretKey)-4:], CreatedAt: s.Now(),
	}
	err = s.inTx(ctx, func(tx Tx) error {
		if _, err := tx.GetMerchant(ctx, merchantID); err != nil {
			return err
		}
		if err := tx.CreateAPIKey(ctx, &out.APIKey); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "api_key.create", TargetType: "api_key", TargetID: out.ID, MerchantID: merchantID, Environment: env})
	})
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("merchant")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return out, nil
}

// RevokeAPIKey revokes a key at once; revoking a revoked key changes nothing.
func (s *Service) RevokeAPIKey(ctx context.Context, actor, keyID string) (*APIKey, error) {
	var key *APIKey
	err := s.inTx(ctx, func(tx Tx) error {
		k, err := tx.GetAPIKey(ctx, keyID)
		if err != nil {
			return err
		}
		key = k
		if k.RevokedAt != nil {
			return nil
		}
		now := s.Now()
		k.RevokedAt = &now
		if err := tx.UpdateAPIKey(ctx, k); err != nil {
			return err
		}
		return s.audit(ctx, tx, &AuditEvent{Actor: actor, Action: "api_key.revoke", TargetType: "api_key", TargetID: k.ID, MerchantID: k.MerchantID, Environment: k.Environment})
	})
	if key != nil {
		s.apiKeys.invalidate(key.PublicKey) // committed or not: read it again
	}
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("api key")
	}
	if err != nil {
		return nil, internalError(err)
	}
	return key, nil
}

// ListAPIKeys returns a merchant's keys (without secrets), newest first.
func (s *Service) ListAPIKeys(ctx context.Context, merchantID string) ([]APIKey, error) {
	if _, err := s.GetMerchant(ctx, merchantID); err != nil {
		return nil, err
	}
	keys, err := s.store.ListAPIKeys(ctx, merchantID)
	if err != nil {
		return nil, internalError(err)
	}
	return keys, nil
}

// Authenticate turns a public/secret key pair into a Principal. Every
// failure (unknown, malformed, revoked, mismatched pair) is the same
// unauthorized error, and the secret is compared in constant time.
func (s *Service) Authenticate(ctx context.Context, publicKey, secretKey string) (Principal, error) {
	env, ok := keyEnvironment(publicKey, secretKey)
	if !ok {
		return Principal{}, unauthorized()
	}
	given := hashSecret(secretKey)
	now := s.Now()
	k, cached, gen := s.apiKeys.get(publicKey, now)
	var err error
	if !cached {
		var stored *APIKey
		if stored, err = s.store.GetAPIKeyByPublicKey(ctx, publicKey); err == nil {
			k = *stored
			s.apiKeys.put(stored, gen, now)
		}
	}
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.log.ErrorContext(ctx, "api key lookup failed", "err", err)
			return Principal{}, internalError(err)
		}
		// Compare anyway so that unknown keys cost the same time.
		subtle.ConstantTimeCompare([]byte(given), []byte(given))
		return Principal{}, unauthorized()
	}
	match := subtle.ConstantTimeCompare([]byte(given), []byte(k.SecretHash)) == 1
	if !match || k.RevokedAt != nil || k.Environment != env {
		return Principal{}, unauthorized()
	}
	return Principal{Scope: Scope{MerchantID: k.MerchantID, Environment: k.Environment}, KeyID: k.ID}, nil
}

// keyEnvironment checks the prefixes of a pair and returns its environment.
// A key that is not wire.ValidText is malformed: it never reaches the Store.
func keyEnvironment(publicKey, secretKey string) (Environment, bool) {
	switch {
	case !wire.ValidText(publicKey) || !wire.ValidText(secretKey):
		return "", false
	case strings.HasPrefix(publicKey, publicKeyPrefixTest) && strings.HasPrefix(secretKey, secretKeyPrefixTest):
		return Test, len(publicKey) > len(publicKeyPrefixTest) && len(secretKey) > len(secretKeyPrefixTest)
	case strings.HasPrefix(publicKey, publicKeyPrefixLive) && strings.HasPrefix(secretKey, secretKeyPrefixLive):
		return Live, len(publicKey) > len(publicKeyPrefixLive) && len(secretKey) > len(secretKeyPrefixLive)
	}
	return "", false
}

// hashSecret is SHA-256: the secret holds 256 random bits, so a slow hash
// would add nothing but latency.
func hashSecret(secret string) string {
	return hexSum(sha256.Sum256([]byte(secret)))
}

// hexSum is sum in hex, in one allocation: the string.
func hexSum(sum [sha256.Size]byte) string {
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], sum[:])
	return string(hx[:])
}

func (s *Service) randomToken() (string, error) {
	b := make([]byte, keyEntropy)
	if _, err := io.ReadFull(s.random, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
