package memory

import (
	"slices"
	"time"

	"github.com/paykit/paykit"
)

// dueIndex finds the pending jobs due at a time without reading every
// pending job: a min-heap of entries by the time each job becomes
// claimable (its RunAt, or its lease's end when later). Every write of a
// pending job adds an entry; entries are checked against the job when
// they come due, and those of jobs since rescheduled, claimed or completed
// are dropped then. A transaction that rolls back puts back the entries
// it took out.
type dueIndex struct {
	h       dueHeap
	taken   []dueEntry // by the transaction in progress
	touched bool       // registered with the transaction in progress
}

type dueEntry struct {
	at    time.Time // claimable from
	runAt time.Time
	id    string
}

// claimableAt is when j may be claimed: its RunAt, or the end of its
// lease when that is later.
func claimableAt(j *paykit.Job) time.Time {
	if j.LeaseUntil != nil && j.LeaseUntil.After(j.RunAt) {
		return *j.LeaseUntil
	}
	return j.RunAt
}

// current reports whether e still describes the pending job jobs[e.id].
func (e *dueEntry) current(jobs map[string]paykit.Job) bool {
	j, ok := jobs[e.id]
	return ok && j.RunAt.Equal(e.runAt) && claimableAt(&j).Equal(e.at)
}

// add indexes the pending job j as written by t.
func (x *dueIndex) add(t *txn, j *paykit.Job) {
	x.register(t)
	x.h.push(dueEntry{claimableAt(j), j.RunAt, j.ID})
}

// due takes out the entries of the jobs claimable at now, current ones
// only, each job once.
func (x *dueIndex) due(t *txn, jobs map[string]paykit.Job, now time.Time) []dueEntry {
	var out []dueEntry
	for len(x.h) > 0 && !x.h[0].at.After(now) {
		e := x.h.pop()
		if e.current(jobs) && !slices.ContainsFunc(out, func(o dueEntry) bool { return o.id == e.id }) {
			x.register(t)
			x.taken = append(x.taken, e)
			out = append(out, e)
		}
	}
	return out
}

// putBack returns entries taken out by due and not used.
func (x *dueIndex) putBack(es []dueEntry) {
	for _, e := range es {
		x.h.push(e)
	}
}

func (x *dueIndex) register(t *txn) {
	if !x.touched {
		x.touched = true
		t.touched = append(t.touched, x)
	}
}

// rollback puts back what the transaction took out; what it added stays,
// to be dropped when it comes due.
func (x *dueIndex) rollback() { x.putBack(x.taken) }

func (x *dueIndex) reset() {
	x.taken = x.taken[:0]
	x.touched = false
}

// dueHeap is a binary min-heap of entries by at, then id (by hand rather
// than container/heap, whose interface would box every entry).
type dueHeap []dueEntry

func (h dueHeap) less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].id < h[j].id
}

func (h *dueHeap) push(e dueEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *dueHeap) pop() dueEntry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = dueEntry{}
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
