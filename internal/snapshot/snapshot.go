// Package snapshot is the stored form of a paykit.Resource: the JSON the
// Stores keep as an event's data and an idempotency record's answer. A
// snapshot is an object whose "object" member names the resource type
// (Resource.Object) and whose other members are the resource's fields
// under their json names, zero values left out:
//
//	{"object":"payment_intent","id":"pi_…","status":"requires_action",…}
//
// The names come from the resource types' struct tags, never from Go field
// names (testdata pins each type's format), so renaming a field does not
// change stored data. Adding a resource type means a line in types.
package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/paykit/paykit"
)

// types decodes the snapshot of each resource type, by object name.
var types = map[string]func([]byte) (paykit.Resource, error){
	(*paykit.PaymentIntent)(nil).Object():   decode[paykit.PaymentIntent],
	(*paykit.Checkout)(nil).Object():        decode[paykit.Checkout],
	(*paykit.PayoutIntent)(nil).Object():    decode[paykit.PayoutIntent],
	(*paykit.Refund)(nil).Object():          decode[paykit.Refund],
	(*paykit.WebhookEndpoint)(nil).Object(): decode[paykit.WebhookEndpoint],
	(*paykit.Dispute)(nil).Object():         decode[paykit.Dispute],
}

var (
	// encoding writes map members in sorted order, so equal resources
	// give equal bytes.
	encoding = json.Deterministic(true)
	// decoding refuses what a snapshot of the type cannot hold.
	decoding = json.RejectUnknownMembers(true)
)

// doc is the snapshot of a *T read back: its object name, then its
// members.
type doc[T any] struct {
	Object string `json:"object"`
	V      *T     `json:",inline"`
}

// Marshal returns the snapshot of r.
func Marshal(r paykit.Resource) ([]byte, error) {
	w := buffers.Get().(*writer)
	defer buffers.Put(w)
	w.b = w.b[:0]
	if err := w.snapshot(r); err != nil {
		return nil, err
	}
	return bytes.Clone(w.b), nil // one allocation of its size
}

// writer appends what is written to b.
type writer struct{ b []byte }

func (w *writer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// buffers hold the writers snapshots are made in.
var buffers = sync.Pool{New: func() any { return &writer{make([]byte, 0, 1024)} }}

// snapshot appends the snapshot of r: "object", then r's members.
func (w *writer) snapshot(r paykit.Resource) error {
	if r == nil {
		return errors.New("snapshot: no resource")
	}
	var err error
	if w.b, err = jsontext.AppendQuote(append(w.b, `{"object":`...), r.Object()); err != nil {
		return err
	}
	start := len(w.b)
	if err := json.MarshalWrite(w, r, encoding); err != nil {
		return fmt.Errorf("snapshot of %s: %w", r.Object(), err)
	}
	// r's '{' becomes the member separator, or goes when r has no members.
	if len(w.b) == start+2 {
		w.b = append(w.b[:start], '}')
	} else {
		w.b[start] = ','
	}
	return nil
}

// Unmarshal reads a snapshot.
func Unmarshal(b []byte) (paykit.Resource, error) {
	var head struct {
		Object string `json:"object"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	dec, ok := types[head.Object]
	if !ok {
		return nil, fmt.Errorf("snapshot: unknown object %q", head.Object)
	}
	return dec(b)
}

func decode[T any, P interface {
	*T
	paykit.Resource
}](b []byte) (paykit.Resource, error) {
	d := doc[T]{V: new(T)}
	if err := json.Unmarshal(b, &d, decoding); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", P(d.V).Object(), err)
	}
	return P(d.V), nil
}

// Clone returns a deep copy of r: its snapshot read back.
func Clone(r paykit.Resource) (paykit.Resource, error) {
	b, err := Marshal(r)
	if err != nil {
		return nil, err
	}
	return Unmarshal(b)
}

// answer is the stored form of a paykit.StoredAnswer: its kind and the
// snapshot of its resource.
type answer struct {
	Kind     paykit.AnswerKind `json:"kind"`
	Resource jsontext.Value    `json:"resource"`
}

// MarshalAnswer returns the stored form of a:
// {"kind":…,"resource":<snapshot>}.
func MarshalAnswer(a *paykit.StoredAnswer) ([]byte, error) {
	w := buffers.Get().(*writer)
	defer buffers.Put(w)
	var err error
	if w.b, err = jsontext.AppendQuote(append(w.b[:0], `{"kind":`...), string(a.Kind)); err != nil {
		return nil, err
	}
	w.b = append(w.b, `,"resource":`...)
	if err := w.snapshot(a.Resource); err != nil {
		return nil, err
	}
	return bytes.Clone(append(w.b, '}')), nil
}

// UnmarshalAnswer reads the stored form of an answer.
func UnmarshalAnswer(b []byte) (*paykit.StoredAnswer, error) {
	var d answer
	if err := json.Unmarshal(b, &d, decoding); err != nil {
		return nil, fmt.Errorf("stored answer: %w", err)
	}
	r, err := Unmarshal(d.Resource)
	if err != nil {
		return nil, err
	}
	return &paykit.StoredAnswer{Kind: d.Kind, Resource: r}, nil
}
