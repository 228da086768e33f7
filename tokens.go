package paykit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// seal returns payload and an HMAC-SHA256 over purpose and payload, both
// base64url-encoded: opaque to callers, tamper-evident, and bound to its
// purpose so a token of one kind is never accepted as another.
func (s *Service) seal(purpose, payload string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, payload))
}

// unseal checks a sealed token in constant time and returns its payload.
func (s *Service) unseal(purpose, token string) (string, bool) {
	enc, sig, ok := strings.Cut(token, ".")
	if !ok {
		return "", false
	}
	// Strict: one token per payload, so a changed character never passes.
	payload, err1 := base64.RawURLEncoding.Strict().DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, string(payload))) {
		return "", false
	}
	return string(payload), true
}

func (s *Service) mac(purpose, payload string) []byte {
	m := hmac.New(sha256.New, s.signingKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(payload))
	return m.Sum(nil)[:16]
}

// Token purposes.
const (
	tokenContinue = "pay.continue" // redirect through the service to the Provider
	tokenReturn   = "pay.return"   // the Provider sends the payer back here
	tokenQR       = "pay.qr"       // QR code image
)

// linkToken seals a resource's scope and id with an expiry for a
// payer-facing URL.
func (s *Service) linkToken(purpose string, scope Scope, id string, exp time.Time) string {
	return s.seal(purpose, strings.Join([]string{strconv.FormatInt(exp.Unix(), 10), string(scope.Environment), scope.MerchantID, id}, "\n"))
}

// openLinkToken returns the scope and id of a valid, unexpired link token.
func (s *Service) openLinkToken(purpose, token string) (Scope, string, bool) {
	payload, ok := s.unseal(purpose, token)
	if !ok {
		return Scope{}, "", false
	}
	f := strings.Split(payload, "\n")
	if len(f) != 4 || f[3] == "" {
		return Scope{}, "", false
	}
	unix, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || !s.Now().Before(time.Unix(unix, 0)) {
		return Scope{}, "", false
	}
	return Scope{MerchantID: f[2], Environment: Environment(f[1])}, f[3], true
}
