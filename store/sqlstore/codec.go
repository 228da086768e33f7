package sqlstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/snapshot"
)

// The Store's own encodings of the Go values it keeps in JSON columns.

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
