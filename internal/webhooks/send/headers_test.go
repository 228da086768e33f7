package send

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/paykit/paykit/internal/webhooks"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func newTestSecret(t *testing.T) string {
	t.Helper()
	s, err := webhooks.NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func verifier(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	return wh
}

func TestSignVerifiedByOfficialLibrary(t *testing.T) {
	is := is.New(t)
	secret := newTestSecret(t)
	body := []byte(`{"id":"evt_123","object":"event","type":"payment_intent.succeeded"}`)
	now := time.Now()

	h, err := Headers([]string{secret}, "evt_123", now, body)
	is.NoErr(err)
	is.Equal(h.Get("webhook-id"), "evt_123")
	is.Equal(h.Get("webhook-timestamp"), strconv.FormatInt(now.Unix(), 10))
	is.Equal(h.Get("Content-Type"), "application/json")
	is.Equal(h.Get("User-Agent"), "paykit-webhooks/1")
	is.True(strings.HasPrefix(h.Get("webhook-signature"), "v1,"))
	is.True(!strings.Contains(h.Get("webhook-signature"), " "))

	wh := verifier(t, secret)
	is.NoErr(wh.Verify(body, h))

	// The same bytes as the official library's own signer.
	want, err := wh.Sign("evt_123", now, body)
	is.NoErr(err)
	is.Equal(h.Get("webhook-signature"), want)

	// Another secret does not verify.
	err = verifier(t, newTestSecret(t)).Verify(body, h)
	is.True(errors.Is(err, standardwebhooks.ErrNoMatchingSignature))
}

func TestSignRotatedSecrets(t *testing.T) {
	is := is.New(t)
	oldSecret, newSecret := newTestSecret(t), newTestSecret(t)
	body := []byte(`{"id":"evt_rot"}`)
	h, err := Headers([]string{oldSecret, newSecret}, "msg_rot", time.Now(), body)
	is.NoErr(err)

	sig := h.Get("webhook-signature")
	parts := strings.Split(sig, " ") // exactly one space between the two
	is.Equal(len(parts), 2)
	for _, p := range parts {
		is.True(strings.HasPrefix(p, "v1,"))
	}

	is.NoErr(verifier(t, oldSecret).Verify(body, h)) // receivers not yet rotated
	is.NoErr(verifier(t, newSecret).Verify(body, h)) // receivers already rotated
	err = verifier(t, newTestSecret(t)).Verify(body, h)
	is.True(errors.Is(err, standardwebhooks.ErrNoMatchingSignature))
}

func TestSignTamperFails(t *testing.T) {
	secret := newTestSecret(t)
	body := []byte(`{"amount":1000}`)
	now := time.Now()
	wh := verifier(t, secret)

	t.Run("body", func(t *testing.T) {
		is := is.New(t)
		h, err := Headers([]string{secret}, "msg_1", now, body)
		is.NoErr(err)
		err = wh.Verify([]byte(`{"amount":9000}`), h)
		is.True(errors.Is(err, standardwebhooks.ErrNoMatchingSignature))
	})
	t.Run("id", func(t *testing.T) {
		is := is.New(t)
		h, err := Headers([]string{secret}, "msg_1", now, body)
		is.NoErr(err)
		h.Set("webhook-id", "msg_2")
		err = wh.Verify(body, h)
		is.True(errors.Is(err, standardwebhooks.ErrNoMatchingSignature))
	})
	t.Run("timestamp changed", func(t *testing.T) {
		is := is.New(t)
		h, err := Headers([]string{secret}, "msg_1", now, body)
		is.NoErr(err)
		h.Set("webhook-timestamp", strconv.FormatInt(now.Unix()-1, 10))
		err = wh.Verify(body, h)
		is.True(errors.Is(err, standardwebhooks.ErrNoMatchingSignature))
	})
	t.Run("old timestamp", func(t *testing.T) {
		is := is.New(t)
		h, err := Headers([]string{secret}, "msg_1", now.Add(-10*time.Minute), body)
		is.NoErr(err)
		err = wh.Verify(body, h)
		is.True(errors.Is(err, standardwebhooks.ErrMessageTooOld))
		is.NoErr(wh.VerifyIgnoringTimestamp(body, h)) // the signature itself is right
	})
}

func TestHeadersRejectBadInput(t *testing.T) {
	is := is.New(t)
	good := newTestSecret(t)
	_, err := Headers(nil, "m", time.Now(), []byte("{}"))
	is.True(errors.Is(err, webhooks.ErrInvalidSecret))
	_, err = Headers([]string{good}, "", time.Now(), []byte("{}"))
	is.True(err != nil)
}
