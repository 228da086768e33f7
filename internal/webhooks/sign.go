package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Header names and fixed values sent with every delivery.
const (
	HeaderID        = "webhook-id"        // the message id, the same across retries
	HeaderTimestamp = "webhook-timestamp" // unix seconds of this attempt's signature
	HeaderSignature = "webhook-signature" // space-separated "v1,<base64>" signatures

	// UserAgent is the User-Agent of delivery requests.
	UserAgent = "paykit-webhooks/1"
)

// Secret format: SecretPrefix followed by the standard base64 encoding of
// between MinSecretBytes and MaxSecretBytes random bytes (NewSecret uses
// SecretBytes).
const (
	SecretPrefix   = "whsec_"
	SecretBytes    = 32
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// ErrInvalidSecret is wrapped by the errors Sign and Headers return for a
// secret that is not SecretPrefix + base64 of 24–64 bytes.
var ErrInvalidSecret = errors.New("webhooks: invalid signing secret")

// NewSecret returns a new signing secret: SecretPrefix followed by the
// standard base64 encoding of SecretBytes bytes read from r. A nil r means
// crypto/rand.Reader.
func NewSecret(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, SecretBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("webhooks: reading random bytes for a secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// secretKey returns the HMAC key of a secret.
func secretKey(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %q prefix", ErrInvalidSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrInvalidSecret)
	}
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return nil, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidSecret, len(key), MinSecretBytes, MaxSecretBytes)
	}
	return key, nil
}

// checkMsgID accepts non-empty ids of visible ASCII characters (no spaces), so
// that the id can be sent as a header value unchanged.
func checkMsgID(msgID string) error {
	if msgID == "" {
		return errors.New("webhooks: empty message id")
	}
	for i := 0; i < len(msgID); i++ {
		if c := msgID[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("webhooks: message id %q has a character other than visible ASCII", msgID)
		}
	}
	return nil
}

// Sign returns the value of the webhook-signature header for a message: for
// each secret, in order, "v1," followed by the standard base64 encoding of
// HMAC-SHA256(key, msgID + "." + unix seconds of ts + "." + body), where key
// is the base64-decoded part of the secret after SecretPrefix. Signatures are
// separated by a single space; pass both the old and the new secret while a
// secret is being rotated so that receivers verifying with either succeed.
//
// It fails when secrets is empty, a secret is malformed (ErrInvalidSecret),
// msgID is empty or not visible ASCII, or ts is not after the Unix epoch.
func Sign(secrets []string, msgID string, ts time.Time, body []byte) (string, error) {
	if len(secrets) == 0 {
		return "", fmt.Errorf("%w: no secret", ErrInvalidSecret)
	}
	if err := checkMsgID(msgID); err != nil {
		return "", err
	}
	unix := ts.Unix()
	if unix <= 0 {
		return "", fmt.Errorf("webhooks: timestamp %v is not after the Unix epoch", ts)
	}
	prefix := msgID + "." + strconv.FormatInt(unix, 10) + "."
	var sb strings.Builder
	for i, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", fmt.Errorf("secret %d: %w", i, err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(prefix))
		m.Write(body)
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("v1,")
		sb.WriteString(base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return sb.String(), nil
}
