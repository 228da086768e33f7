package xendit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paykit/paykit"
)

// dispute is the part of a Disputes API dispute the adapter reads.
type dispute struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Reason   string `json:"status_reason"`
	Currency string `json:"currency"`
	Amount   struct {
		Initial  amount `json:"initial"`
		Terminal amount `json:"terminal"`
	} `json:"amount"`
	DueDate  string `json:"due_date"`
	Updated  string `json:"updated_at"`
	Category *struct {
		Name    string `json:"name"`
		Allowed []struct {
			Name      string  `json:"name"`
			Type      string  `json:"type"`
			MaxLength flexInt `json:"max_length"`
		} `json:"allowed_evidence"`
	} `json:"category"`
	Evidences []struct {
		Type         string `json:"type"`
		CategorySlug string `json:"category_slug"`
	} `json:"evidences"`
	PaymentID   string `json:"payment_id"`
	ReferenceID string `json:"reference_id"`
}

// flexInt is an integer Xendit may write as a number or a string.
type flexInt int

// UnmarshalJSON reads a number or a numeric string.
func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	*n = flexInt(v)
	return nil
}

// disputeStatuses maps Xendit's dispute statuses to paykit's.
var disputeStatuses = map[string]paykit.DisputeStatus{
	"ACTION_REQUIRED": paykit.DisputeNeedsResponse, "UNDER_REVIEW": paykit.DisputeUnderReview,
	"WON": paykit.DisputeWon, "LOST": paykit.DisputeLost,
}

// disputeReason maps a dispute category slug (fraud, …) to paykit's
// reasons by the words it contains; any other is general.
func disputeReason(category string) paykit.DisputeReason {
	c := strings.ToLower(category)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(c, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("fraud", "unauthori", "unrecogni"):
		return paykit.DisputeFraudulent
	case has("not_received", "not received", "non_receipt", "not_delivered", "not_provided"):
		return paykit.DisputeProductNotReceived
	case has("not_as_described", "defective", "unacceptable", "quality", "damaged", "counterfeit"):
		return paykit.DisputeProductUnacceptable
	case has("duplicate", "paid_by_other_means"):
		return paykit.DisputeDuplicate
	case has("credit_not_processed", "refund", "cancel"):
		return paykit.DisputeCreditNotProcessed
	}
	return paykit.DisputeGeneral
}

// errDispute is wrapped by the errors of dispute calls without a usable
// answer.
var errDispute = errors.New("xendit: no usable answer about the dispute")

const disputesPath = "/v1/disputes/"

// readDispute reads the dispute ref (GET /v1/disputes/{id}).
func (p *Provider) readDispute(ctx context.Context, ref string) (dispute, error) {
	body, end := p.get(ctx, disputesPath+url.PathEscape(ref), nil, false)
	if end != nil {
		return dispute{}, fmt.Errorf("%w: %s", errDispute, end.Detail)
	}
	var d dispute
	if err := json.Unmarshal(body, &d); err != nil || d.ID == "" {
		return dispute{}, fmt.Errorf("%w: GET %s%s: the answer is not a dispute", errDispute, disputesPath, ref)
	}
	return d, nil
}

// mapDispute is paykit's account of d. The disputed payment is named by
// Xendit's payment id (py-…); the adapter reads the payment
// (GET /v3/payments/{id}) for its payment request, which is the payment's
// Reference in paykit. status, if set, overrides d's (an accept or
// challenge Xendit acknowledged and processes asynchronously).
func (p *Provider) mapDispute(ctx context.Context, d dispute, status string) (paykit.ProviderDispute, error) {
	if status == "" {
		status = d.Status
	}
	st, ok := disputeStatuses[status]
	if !ok {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: dispute %s has status %q, which the adapter does not map", errDispute, d.ID, status)
	}
	ccy := strings.ToUpper(d.Currency)
	amt, err := d.Amount.Initial.minor(ccy)
	if err != nil || amt <= 0 {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: dispute %s: amount %q %s: %v", errDispute, d.ID, d.Amount.Initial, ccy, err)
	}
	category := ""
	if d.Category != nil {
		category = d.Category.Name
	}
	pd := paykit.ProviderDispute{
		Reference: d.ID, PaymentKey: d.ReferenceID, Amount: amt, Currency: ccy, Reason: disputeReason(category), Status: st,
		Detail: fmt.Sprintf("xendit: dispute %s %s category %s", d.Status, d.Reason, category),
	}
	if d.Amount.Terminal != "" {
		pd.Detail += "; terminal amount " + string(d.Amount.Terminal)
	}
	if t, err := time.Parse(time.RFC3339, d.DueDate); err == nil {
		pd.EvidenceDueBy = t.UTC()
	}
	if d.PaymentID != "" {
		body, end := p.get(ctx, "/v3/payments/"+url.PathEscape(d.PaymentID), nil, true)
		if end != nil {
			return paykit.ProviderDispute{}, fmt.Errorf("%w: dispute %s: reading payment %s: %s", errDispute, d.ID, d.PaymentID, end.Detail)
		}
		var py struct {
			PaymentRequestID string `json:"payment_request_id"`
			ReferenceID      string `json:"reference_id"`
		}
		if err := json.Unmarshal(body, &py); err != nil || py.PaymentRequestID == "" {
			return paykit.ProviderDispute{}, fmt.Errorf("%w: dispute %s: payment %s names no payment request", errDispute, d.ID, d.PaymentID)
		}
		pd.PaymentRef = py.PaymentRequestID
		if pd.PaymentKey == "" {
			pd.PaymentKey = py.ReferenceID
		}
	}
	return pd, nil
}

// InquireDispute reads the dispute (GET /v1/disputes/{id}).
func (p *Provider) InquireDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	d, err := p.readDispute(ctx, ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	return p.mapDispute(ctx, d, "")
}

// SubmitDisputeEvidence sends text as TEXT evidence (POST
// /v1/disputes/{id}/evidences, multipart, under the dispute's TEXT
// evidence category with the largest max_length, cut to it) and
// challenges the dispute (POST /v1/disputes/{id}/challenge), which Xendit
// documents as moving it to UNDER_REVIEW. A dispute no longer
// ACTION_REQUIRED is answered as it is, so that repeating a call is safe;
// so is text evidence already filed.
func (p *Provider) SubmitDisputeEvidence(ctx context.Context, ref, text string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	d, err := p.readDispute(ctx, ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	if d.Status != "ACTION_REQUIRED" {
		return p.mapDispute(ctx, d, "")
	}
	slug, limit := "", flexInt(0)
	if d.Category != nil {
		for _, a := range d.Category.Allowed {
			if a.Type == "TEXT" && (slug == "" || a.MaxLength > limit) {
				slug, limit = a.Name, a.MaxLength
			}
		}
	}
	if slug == "" {
		return paykit.ProviderDispute{}, fmt.Errorf("%w: dispute %s allows no TEXT evidence", errDispute, d.ID)
	}
	filed := false
	for _, e := range d.Evidences {
		filed = filed || (e.Type == "TEXT" && e.CategorySlug == slug)
	}
	detail := ""
	if !filed {
		if limit > 0 && utf8.RuneCountInString(text) > int(limit) {
			text = string([]rune(text)[:int(limit)])
			detail = fmt.Sprintf("; evidence cut to the %d characters category %s takes", limit, slug)
		}
		if err := p.fileEvidence(ctx, d.ID, slug, text); err != nil {
			return paykit.ProviderDispute{}, err
		}
	}
	pd, err := p.act(ctx, d.ID, "challenge", "UNDER_REVIEW")
	pd.Detail += detail
	return pd, err
}

// fileEvidence posts text as the evidence of category slug.
func (p *Provider) fileEvidence(ctx context.Context, id, slug, text string) error {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.WriteField(slug, text); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	r := p.do(ctx, request{method: http.MethodPost, path: disputesPath + url.PathEscape(id) + "/evidences", raw: buf.Bytes(), contentType: w.FormDataContentType()})
	switch {
	case r.fault != nil:
		return fmt.Errorf("%w: filing evidence: %s", errDispute, r.fault.Detail)
	case r.err != nil:
		return fmt.Errorf("%w: filing evidence: %s", errDispute, r.errorDetail())
	}
	var res struct {
		Failed []struct {
			ErrorCode string `json:"error_code"`
			Reason    string `json:"reason"`
		} `json:"evidences_failed"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil {
		return fmt.Errorf("%w: filing evidence: the answer is unreadable", errDispute)
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("%w: filing evidence: %s: %s", errDispute, res.Failed[0].ErrorCode, res.Failed[0].Reason)
	}
	return nil
}

// AcceptDispute concedes the dispute (POST /v1/disputes/{id}/accept),
// which Xendit documents as moving it to LOST, processed asynchronously.
// A dispute no longer open (ILLEGAL_STATE) is answered as it is.
func (p *Provider) AcceptDispute(ctx context.Context, ref string) (paykit.ProviderDispute, error) {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	return p.act(ctx, ref, "accept", "LOST")
}

// act posts action (accept, challenge) on dispute ref and reads the
// dispute afterwards. Xendit processes both asynchronously: while the
// dispute still reads ACTION_REQUIRED after Xendit acknowledged the
// action, documented is its status (the action's documented result). A
// dispute Xendit no longer takes the action on (400 ILLEGAL_STATE) is
// answered as it is.
func (p *Provider) act(ctx context.Context, ref, action, documented string) (paykit.ProviderDispute, error) {
	r := p.do(ctx, request{method: http.MethodPost, path: disputesPath + url.PathEscape(ref) + "/" + action})
	status := ""
	switch {
	case r.fault != nil:
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, r.fault.Detail)
	case r.err != nil && r.status == http.StatusBadRequest && r.err.ErrorCode == "ILLEGAL_STATE":
	case r.err != nil:
		return paykit.ProviderDispute{}, fmt.Errorf("%w: %s", errDispute, r.errorDetail())
	default:
		status = documented
	}
	d, err := p.readDispute(ctx, ref)
	if err != nil {
		return paykit.ProviderDispute{}, err
	}
	if d.Status != "ACTION_REQUIRED" {
		status = ""
	}
	return p.mapDispute(ctx, d, status)
}
