package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/paykit/paykit"
)

// The Store's own encodings of the Go values it keeps in JSON columns. The
// next_action and receipt documents keep the format earlier versions wrote,
// so old rows read the same.

// nextActionDoc is the next_action column.
type nextActionDoc struct {
	Type      string    `json:"type"`
	URL       string    `json:"url,omitempty"`
	QRData    string    `json:"qr_data,omitempty"`
	ImageURL  string    `json:"image_url,omitempty"`
	BankName  string    `json:"bank_name,omitempty"`
	Account   string    `json:"account_number,omitempty"`
	Holder    string    `json:"account_holder,omitempty"`
	Reference string    `json:"reference,omitempty"`
	Currency  string    `json:"currency,omitempty"`
	Amount    string    `json:"amount,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

func encodeNextAction(n *paykit.NextAction) (string, error) {
	if n == nil {
		return "", nil
	}
	d := nextActionDoc{n.Type, n.URL, n.QRData, n.ImageURL, n.BankName, n.Account, n.Holder, n.Reference, n.Currency, "", n.ExpiresAt.UTC()}
	if n.Amount != 0 {
		d.Amount = strconv.FormatInt(n.Amount, 10)
	}
	return toJSON(&d)
}

func decodeNextAction(s string) (*paykit.NextAction, error) {
	d, err := fromJSON[nextActionDoc](s)
	if d == nil || err != nil {
		return nil, err
	}
	n := &paykit.NextAction{Type: d.Type, URL: d.URL, QRData: d.QRData, ImageURL: d.ImageURL, BankName: d.BankName,
		Account: d.Account, Holder: d.Holder, Reference: d.Reference, Currency: d.Currency, ExpiresAt: d.ExpiresAt.UTC()}
	if d.Amount != "" {
		if n.Amount, err = strconv.ParseInt(d.Amount, 10, 64); err != nil {
			return nil, fmt.Errorf("next_action amount: %w", err)
		}
	}
	return n, nil
}

// receiptDoc is the receipt column.
type receiptDoc struct {
	Number        string    `json:"number"`
	PaidAt        time.Time `json:"paid_at"`
	Amount        string    `json:"amount"`
	Currency      string    `json:"currency"`
	PaymentMethod string    `json:"payment_method"`
}

func encodeReceipt(r *paykit.Receipt) (string, error) {
	if r == nil {
		return "", nil
	}
	return toJSON(&receiptDoc{r.Number, r.PaidAt.UTC(), strconv.FormatInt(r.Amount, 10), r.Currency, r.PaymentMethod})
}

func decodeReceipt(s string) (*paykit.Receipt, error) {
	d, err := fromJSON[receiptDoc](s)
	if d == nil || err != nil {
		return nil, err
	}
	amount, err := strconv.ParseInt(d.Amount, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("receipt amount: %w", err)
	}
	return &paykit.Receipt{Number: d.Number, PaidAt: d.PaidAt.UTC(), Amount: amount, Currency: d.Currency, PaymentMethod: d.PaymentMethod}, nil
}

// snapshotDoc holds a resource as it was at a moment: the data of an event
// and the answer of an idempotency record. V tells it from the rendered
// JSON earlier versions stored in the same columns.
type snapshotDoc struct {
	V             int                   `json:"v"`
	Kind          paykit.AnswerKind     `json:"kind,omitempty"`
	PaymentIntent *paykit.PaymentIntent `json:"payment_intent,omitempty"`
	PayoutIntent  *paykit.PayoutIntent  `json:"payout_intent,omitempty"`
	Checkout      *paykit.Checkout      `json:"checkout,omitempty"`
	Refund        *paykit.Refund        `json:"refund,omitempty"`
	// WebhookEndpoint (an answer only) holds its secrets sealed.
	WebhookEndpoint *paykit.WebhookEndpoint `json:"webhook_endpoint,omitempty"`
}

const snapshotVersion = 1

// snapshotBuffers hold the buffers snapshots are written in.
var snapshotBuffers = sync.Pool{New: func() any { return new([]byte) }}

func encodeSnapshot(d snapshotDoc) ([]byte, error) {
	if d.PaymentIntent != nil && d.PayoutIntent == nil && d.Checkout == nil && d.Refund == nil && d.WebhookEndpoint == nil {
		buf := snapshotBuffers.Get().(*[]byte)
		defer snapshotBuffers.Put(buf)
		if b, ok := appendPaymentSnapshot((*buf)[:0], d.Kind, d.PaymentIntent); ok {
			*buf = b
			return bytes.Clone(b), nil // one allocation of its size
		}
	}
	d.V = snapshotVersion
	return json.Marshal(d)
}

// decodeSnapshot reads b; ok is false for rendered JSON of an earlier
// version.
func decodeSnapshot(b []byte) (d snapshotDoc, ok bool, err error) {
	if err := json.Unmarshal(b, &d); err != nil {
		return d, false, err
	}
	return d, d.V == snapshotVersion, nil
}

// legacyAnswerKinds are the answer kinds of the HTTP statuses earlier
// versions stored.
var legacyAnswerKinds = map[int]paykit.AnswerKind{200: paykit.AnswerDone, 201: paykit.AnswerCreated, 202: paykit.AnswerAccepted}

func encodeAnswer(a *paykit.StoredAnswer) (status int, body []byte, err error) {
	if a == nil {
		return 0, nil, nil
	}
	if a.LegacyBody != nil {
		for s, k := range legacyAnswerKinds {
			if k == a.Kind {
				return s, a.LegacyBody, nil
			}
		}
	}
	body, err = encodeSnapshot(snapshotDoc{Kind: a.Kind, PaymentIntent: a.PaymentIntent, PayoutIntent: a.PayoutIntent, Checkout: a.Checkout, Refund: a.Refund, WebhookEndpoint: a.WebhookEndpoint})
	return 0, body, err
}

func decodeAnswer(status int, body []byte) (*paykit.StoredAnswer, error) {
	if body == nil {
		return nil, nil
	}
	if status != 0 {
		return &paykit.StoredAnswer{Kind: legacyAnswerKinds[status], LegacyBody: body}, nil
	}
	d, ok, err := decodeSnapshot(body)
	if err != nil || !ok {
		return nil, fmt.Errorf("idempotency answer: not a snapshot (%v)", err)
	}
	return &paykit.StoredAnswer{Kind: d.Kind, PaymentIntent: d.PaymentIntent, PayoutIntent: d.PayoutIntent, Checkout: d.Checkout, Refund: d.Refund, WebhookEndpoint: d.WebhookEndpoint}, nil
}
