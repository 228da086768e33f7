// Package wakeup fans one signal out to many listeners: a Store tells the
// workers of its process that jobs are due.
package wakeup

import "sync"

// Hub delivers each Signal to every subscriber. A subscriber's channel
// holds one pending signal: signals that come while one is pending merge
// into it. The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives after each Signal, and the
// function that ends the subscription.
func (h *Hub) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan struct{}]struct{}{}
	}
	h.subs[ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
	}
}

// Signal wakes every subscriber, without waiting for any.
func (h *Hub) Signal() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
