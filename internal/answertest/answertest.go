// Package answertest turns what the Service's Go API returns into what the
// HTTP API would answer, for tests that check both at once.
package answertest

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/httpadapter"
)

// Response is an answer as the HTTP adapter renders it, with the Go value.
type Response struct {
	Status   int
	Body     []byte
	Replayed bool
	Value    any // the *PaymentIntent, *Checkout or *PayoutIntent
}

// From renders the result of a create or cancel: its status, the
// contract's JSON and the value. An error is returned as it is.
func From[T any](v *T, ans paykit.Answer, err error) (*Response, error) {
	if err != nil {
		return nil, err
	}
	body, err := httpadapter.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &Response{Status: httpadapter.AnswerStatus(ans.Kind), Body: body, Replayed: ans.Replayed, Value: v}, nil
}

// Decode stores the Go value in dst, a pointer to its type.
func (r *Response) Decode(dst any) error {
	d, v := reflect.ValueOf(dst), reflect.ValueOf(r.Value)
	if d.Kind() != reflect.Pointer || v.Type() != d.Type() {
		return fmt.Errorf("answertest: answer holds %T, not %T", r.Value, dst)
	}
	d.Elem().Set(v.Elem())
	return nil
}

// Map decodes the JSON body.
func (r *Response) Map() (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(r.Body, &m)
	return m, err
}
