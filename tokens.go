package paykit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"strconv"
	"strings"
	"time"
)

// seal returns payload and an HMAC-SHA256 over purpose and payload, both
// base64url-encoded: opaque to callers, tamper-evident, and bound to its
// purpose so a token of one kind is never accepted as another.
func (s *Service) seal(purpose, payload string) string {
	var scratch, p [256]byte
	return string(s.appendSeal(nil, scratch[:0], purpose, append(p[:0], payload...)))
}

// appendSeal appends seal(purpose, payload) to dst; scratch is room for
// the MAC's input and its sum, so that a caller can keep them on its
// stack.
func (s *Service) appendSeal(dst, scratch []byte, purpose string, payload []byte) []byte {
	enc := base64.RawURLEncoding
	in := len(purpose) + 1 + len(payload)
	scratch = append(append(append(scratch[:0], purpose...), 0), payload...)
	mac := s.sum(scratch[in:in], scratch[:in])
	dst = enc.AppendEncode(dst, payload)
	return enc.AppendEncode(append(dst, '.'), mac)
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
	msg := make([]byte, 0, len(purpose)+1+len(payload))
	msg = append(append(append(msg, purpose...), 0), payload...)
	return s.sum(nil, msg)
}

// sum appends to b the first 16 bytes of the HMAC-SHA256 of msg under the
// signing key, with a keyed hash kept in s.macs.
func (s *Service) sum(b, msg []byte) []byte {
	m, _ := s.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, s.signingKey)
	}
	m.Reset()
	m.Write(msg)
	n := len(b)
	b = m.Sum(b)
	s.macs.Put(m)
	return b[:n+16]
}

// Token purposes.
const (
	tokenContinue = "pay.continue" // redirect through the service to the Provider
	tokenReturn   = "pay.return"   // the Provider sends the payer back here
	tokenQR       = "pay.qr"       // QR code image
)

// appendLinkToken appends a token that seals a resource's scope and id
// with an expiry for a payer-facing URL.
func (s *Service) appendLinkToken(dst []byte, purpose string, scope Scope, id string, exp time.Time) []byte {
	var payload, scratch [256]byte
	p := strconv.AppendInt(payload[:0], exp.Unix(), 10)
	p = append(append(append(append(append(append(p, '\n'), scope.Environment...), '\n'), scope.MerchantID...), '\n'), id...)
	return s.appendSeal(dst, scratch[:0], purpose, p)
}

// payURL is the payer-facing URL publicURL/pay/kind/token+suffix of a link
// token, in one allocation.
func (s *Service) payURL(kind, purpose string, scope Scope, id string, exp time.Time, suffix string) string {
	var buf [512]byte
	u := append(append(append(append(buf[:0], s.publicURL...), "/pay/"...), kind...), '/')
	u = s.appendLinkToken(u, purpose, scope, id, exp)
	return string(append(u, suffix...))
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
