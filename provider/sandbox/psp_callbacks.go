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
// service about every attempt, transfer and refund that reached a final state (and
// about a transfer's reversal), and every dispute that time decided, by
// POSTing a signed callbackView. Like
// settlement, sending is driven from outside: SendCallbacks sends what is
// due now, and Run calls it periodically and whenever a payer decides.
// Which state a receiver acknowledged is part of the PSP's state, so a
// callback due when a PSP stops is sent by the next one on that state.
// Delivery is at least once: PSPs sharing a state may each send a
// callback that falls due in both rounds.

// pendingCallback is a final state not yet acknowledged by the receiver.
type pendingCallback struct {
	order time.Time
	body  callbackView
}

// dueCallbacks settles every record due for a look and returns the
// final states the receiver has not acknowledged, oldest first.
func (p *PSP) dueCallbacks(ctx context.Context, now time.Time) ([]pendingCallback, error) {
	pays, err := dueIn(ctx, p, p.st.payments(), "payment", now)
	if err != nil {
		return nil, err
	}
	trfs, err := dueIn(ctx, p, p.st.transfers(), "payout", now)
	if err != nil {
		return nil, err
	}
	rfds, err := dueIn(ctx, p, p.st.refunds(), "refund", now)
	if err != nil {
		return nil, err
	}
	dsps, err := dueIn(ctx, p, p.st.disputes(), "dispute", now)
	if err != nil {
		return nil, err
	}
	out := append(append(append(pays, trfs...), rfds...), dsps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].order.Before(out[j].order) })
	return out, nil
}

// dueIn settles the due records of one table and returns their owed
// callbacks.
func dueIn[T record](ctx context.Context, p *PSP, records table[T], kind string, now time.Time) ([]pendingCallback, error) {
	keys, err := records.due(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []pendingCallback
	for _, key := range keys {
		_, err := records.update(ctx, byKey(key), func(rec T) {
			rec.settle(now)
			if l := rec.base(); final(l.State) && l.Notified != l.State {
				c := rec.callback(p.interval)
				c.Kind = kind
				out = append(out, pendingCallback{l.Updated, c})
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// acknowledged records that the receiver acknowledged c's state.
func (p *PSP) acknowledged(ctx context.Context, c callbackView) error {
	mark := func(l *lifecycle) { l.Notified = c.State }
	var err error
	switch c.Kind {
	case "payment":
		_, err = p.st.payments().update(ctx, byKey(c.Key), func(pm *payment) { mark(pm.base()) })
	case "refund":
		_, err = p.st.refunds().update(ctx, byKey(c.Key), func(rf *refund) { mark(rf.base()) })
	case "dispute":
		_, err = p.st.disputes().update(ctx, byKey(c.Key), func(d *dispute) { mark(d.base()) })
	default:
		_, err = p.st.transfers().update(ctx, byKey(c.Key), func(t *transfer) { mark(t.base()) })
	}
	return err
}

// SendCallbacks posts a callback for every final state not yet
// acknowledged (a 2xx answer) and returns how many were acknowledged. A
// callback that fails is sent again by the next call. Without a
// CallbackURL it sends nothing.
func (p *PSP) SendCallbacks(ctx context.Context) (int, error) {
	if p.callbackURL == "" {
		return 0, nil
	}
	due, err := p.dueCallbacks(ctx, p.now())
	if err != nil {
		return 0, fmt.Errorf("sandbox: callbacks: %w", err)
	}
	sent := 0
	var errs []error
	for _, c := range due {
		c.body.ID = newID("evt")
		if err := p.postCallback(ctx, c.body); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := p.acknowledged(ctx, c.body); err != nil {
			errs = append(errs, fmt.Errorf("sandbox: callback %s %s: %w", c.body.Kind, c.body.Key, err))
			continue
		}
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
