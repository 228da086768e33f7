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
	var p [256]byte
	return string(s.appendSeal(nil, purpose, append(p[:0], payload...)))
}

// appendSeal appends seal(purpose, payload) to dst.
func (s *Service) appendSeal(dst []byte, purpose string, payload []byte) []byte {
	var mac [16]byte
	s.sum(mac[:0], purpose, payload)
	enc := base64.RawURLEncoding
	dst = enc.AppendEncode(dst, payload)
	return enc.AppendEncode(append(dst, '.'), mac[:])
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
	return s.sum(nil, purpose, []byte(payload))
}

// sum appends to b the first 16 bytes of the HMAC-SHA256 of purpose, a
// NUL and payload under the signing key. The keyed hash and the room for
// its input are kept in s.macs, so neither b nor payload escapes.
func (s *Service) sum(b []byte, purpose string, payload []byte) []byte {
	m, _ := s.macs.Get().(*macState)
	if m == nil {
		m = &macState{h: hmac.New(sha256.New, s.signingKey)}
	}
	m.buf = append(append(append(m.buf[:0], purpose...), 0), payload...)
	m.h.Reset()
	m.h.Write(m.buf)
	m.buf = m.h.Sum(m.buf[:0])
	b = append(b, m.buf[:16]...)
	s.macs.Put(m)
	return b
}

// macState is a keyed hash with room for its input.
type macState struct {
	h   hash.Hash
	buf []byte
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
	var payload [256]byte
	p := strconv.AppendInt(payload[:0], exp.Unix(), 10)
	p = append(append(append(append(append(append(p, '\n'), scope.Environment...), '\n'), scope.MerchantID...), '\n'), id...)
	return s.appendSeal(dst, purpose, p)
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
