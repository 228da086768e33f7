package wakeup

import "testing"

func TestHubMergesAndFansOut(t *testing.T) {
	var h Hub
	a, stopA := h.Subscribe()
	b, stopB := h.Subscribe()
	defer stopB()
	h.Signal()
	h.Signal() // merges with the pending one
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a subscriber missed the signal")
		}
		select {
		case <-ch:
			t.Fatal("two signals did not merge")
		default:
		}
	}
	stopA()
	h.Signal()
	select {
	case <-a:
		t.Fatal("an ended subscription received")
	default:
	}
	select {
	case <-b:
	default:
		t.Fatal("b missed the signal")
	}
}
