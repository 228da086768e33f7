package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The demo merchant's test float pays a payout; its webhooks reach a
// receiver on loopback, signed per Standard Webhooks; the sandbox PSP's
// callbacks settle it.
func TestServerPayoutAndWebhooks(t *testing.T) {
	is := is.New(t)
	var mu sync.Mutex
	var types []string
	var secret string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil || wh.Verify(body, r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev struct{ Type string }
		_ = json.Unmarshal(body, &ev)
		types = append(types, ev.Type)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	s := start(t, "-db", "sqlite:"+filepath.Join(t.TempDir(), "paykit.db"), "-addr", "127.0.0.1:0",
		"-worker-interval", "100ms", "-sandbox-delay", "500ms")
	status, _, body := call(t, "GET", s.url+"/v1/balances", "", basicAuth(s.public, s.secret))
	is.Equal(status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(body)), `{"object":"list","data":[{"object":"balance","currency":"MYR","available":"100000000","pending":"0","reserved":"0"},`+
		`{"object":"balance","currency":"THB","available":"100000000","pending":"0","reserved":"0"}],"has_more":false,"next_cursor":null}`)

	status, _, body = call(t, "POST", s.url+"/operator/merchants/mch_demo/webhook_endpoints",
		`{"environment":"test","url":"`+recv.URL+`/hooks"}`, bearerAuth(s.token))
	is.Equal(status, http.StatusCreated)
	var ep struct{ Secret string }
	is.NoErr(json.Unmarshal(body, &ep))
	mu.Lock()
	secret = ep.Secret
	mu.Unlock()

	var po struct{ ID, Status string }
	po.ID, po.Status = s.createPayout(t, "po-1")
	is.Equal(po.Status, "processing")

	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), types...)
		mu.Unlock()
		if len(got) == 2 {
			is.Equal(got, []string{"payout_intent.processing", "payout_intent.succeeded"})
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks received: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, _, body = call(t, "GET", s.url+"/v1/balances", "", basicAuth(s.public, s.secret))
	is.Equal(status, http.StatusOK)
	is.Equal(strings.TrimSpace(string(body)), `{"object":"list","data":[{"object":"balance","currency":"MYR","available":"100000000","pending":"0","reserved":"0"},`+
		`{"object":"balance","currency":"THB","available":"99750000","pending":"0","reserved":"0"}],"has_more":false,"next_cursor":null}`)
}
