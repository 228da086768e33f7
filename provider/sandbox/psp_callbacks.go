package sandbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"
)

// Callbacks: with PSPConfig.CallbackURL set, the PSP tells the merchant's
// service about every attempt and transfer that reached a final state (and
// about a transfer's reversal) by POSTing a signed callbackView. Like
// settlement, sending is driven from outside: SendCallbacks sends what is
// due now, and Run calls it periodically and whenever a payer decides.

// pendingCallback is a final state not yet acknowledged by the receiver.
type pendingCallback struct {
	id    string // the record's notification key: kind + ":" + key
	order time.Time
	body  callbackView
}

// dueCallbacks settles every record and returns the final states the
// receiver has not acknowledged, oldest first. Callers hold p.mu.
func (p *PSP) dueCallbacks(now time.Time) []pendingCallback {
	var out []pendingCallback
	for key, pm := range p.payments {
		pm.settle(now)
		if id := "payment:" + key; final(pm.state) && p.notified[id] != pm.state {
			out = append(out, pendingCallback{id, pm.updated, callbackView{Kind: "payment", Key: key, State: pm.state, ErrorCode: pm.errCode}})
		}
	}
	for key, t := range p.transfers {
		t.settle(now)
		if id := "payout:" + key; final(t.state) && p.notified[id] != t.state {
			out = append(out, pendingCallback{id, t.updated, callbackView{Kind: "payout", Key: key, State: t.state, ErrorCode: t.errCode}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order.Before(out[j].order) })
	return out
}

// SendCallbacks posts a callback for every final state not yet
// acknowledged (a 2xx answer) and returns how many were acknowledged. A
// callback that fails is sent again by the next call. Without a
// CallbackURL it sends nothing.
func (p *PSP) SendCallbacks(ctx context.Context) (int, error) {
	if p.callbackURL == "" {
		return 0, nil
	}
	p.mu.Lock()
	due := p.dueCallbacks(p.now())
	p.mu.Unlock()
	sent := 0
	var errs []error
	for _, c := range due {
		c.body.ID = newID("evt")
		if err := p.postCallback(ctx, c.body); err != nil {
			errs = append(errs, err)
			continue
		}
		p.mu.Lock()
		p.notified[c.id] = c.body.State
		p.mu.Unlock()
		sent++
	}
	return sent, errors.Join(errs...)
}

func (p *PSP) postCallback(ctx context.Context, c callbackView) error {
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.callbackURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, hex.EncodeToString(mac(p.apiKey, body)))
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("sandbox: callback %s %s: %w", c.Kind, c.Key, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("sandbox: callback %s %s: answered %d", c.Kind, c.Key, resp.StatusCode)
	}
	return nil
}

// Run sends callbacks every interval, and at once after a payer's choice,
// until ctx ends. Failures are retried on the next round.
func (p *PSP) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, _ = p.SendCallbacks(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.kick:
		}
	}
}

// wake asks Run for a round soon.
func (p *PSP) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}
