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
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
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

// linkToken seals a resource id with an expiry for a payer-facing URL.
func (s *Service) linkToken(purpose, id string, exp time.Time) string {
	return s.seal(purpose, strconv.FormatInt(exp.Unix(), 10)+"."+id)
}

// openLinkToken returns the id of a valid, unexpired link token.
func (s *Service) openLinkToken(purpose, token string) (string, bool) {
	payload, ok := s.unseal(purpose, token)
	if !ok {
		return "", false
	}
	exp, id, ok := strings.Cut(payload, ".")
	if !ok || id == "" {
		return "", false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.Now().Before(time.Unix(unix, 0)) {
		return "", false
	}
	return id, true
}
