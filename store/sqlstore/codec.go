package sqlstore

import (
	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/snapshot"
)

// The Store's own encodings of the Go values it keeps in JSON columns.

// The next_action and receipt columns hold the values under their own
// json names (those of the stored snapshots); times come back in UTC.

func encodeNextAction(n *paykit.NextAction) (string, error) { return toJSON(n) }

func decodeNextAction(s string) (*paykit.NextAction, error) {
	n, err := fromJSON[paykit.NextAction](s)
	if n != nil {
		n.ExpiresAt = n.ExpiresAt.UTC()
	}
	return n, err
}

func encodeReceipt(r *paykit.Receipt) (string, error) { return toJSON(r) }

func decodeReceipt(s string) (*paykit.Receipt, error) {
	r, err := fromJSON[paykit.Receipt](s)
	if r != nil {
		r.PaidAt = r.PaidAt.UTC()
	}
	return r, err
}

// encodeAnswer is the response_body column: the answer's kind and the
// snapshot of its resource.
func encodeAnswer(a *paykit.StoredAnswer) ([]byte, error) {
	if a == nil {
		return nil, nil
	}
	return snapshot.MarshalAnswer(a)
}

func decodeAnswer(body []byte) (*paykit.StoredAnswer, error) {
	if body == nil {
		return nil, nil
	}
	return snapshot.UnmarshalAnswer(body)
}
