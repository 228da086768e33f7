package xenditfake

import (
	"encoding/json"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// dispute is a Disputes API dispute.
type dispute struct {
	ID              string        `json:"id"`
	CreatedAt       string        `json:"created_at"`
	UpdatedAt       string        `json:"updated_at"`
	ChannelCode     string        `json:"channel_code"`
	Status          string        `json:"status"`
	StatusReason    *string       `json:"status_reason,omitempty"`
	Currency        string        `json:"currency"`
	Amount          disputeAmount `json:"amount"`
	Note            *string       `json:"note"`
	DueDate         string        `json:"due_date"`
	Evidences       []evidence    `json:"evidences"`
	Category        *category     `json:"category"`
	RelatedDisputes []string      `json:"related_disputes"`
	PaymentID       string        `json:"payment_id"`
	ReferenceID     string        `json:"reference_id"`

	amount int64
	text   string // the TEXT evidence filed
}

type disputeAmount struct {
	Initial  string  `json:"initial"`
	Terminal *string `json:"terminal"`
}

type evidence struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	CategorySlug string `json:"category_slug"`
	TextContent  string `json:"text_content,omitempty"`
	CreatedAt    string `json:"created_at"`
}

type category struct {
	Name    string            `json:"name"`
	Allowed []allowedEvidence `json:"allowed_evidence"`
}

type allowedEvidence struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	MaxLength     int64  `json:"max_length"`
	IsRecommended bool   `json:"is_recommended"`
	MaxEvidences  int    `json:"max_evidences"`
}

// evidenceCategories are the evidence categories every fake dispute
// allows: an explanation in text, proof of delivery as a file.
var evidenceCategories = []allowedEvidence{
	{Name: "proof_of_delivery", Type: "FILE", MaxLength: 5242880, IsRecommended: true, MaxEvidences: 3},
	{Name: "explanation", Type: "TEXT", MaxLength: 2000, MaxEvidences: 3},
}

// OpenDispute makes the payer's bank dispute amount (minor units) of the
// paid payment request under key, in category (fraud, product_not_received,
// …; default general): ACTION_REQUIRED, evidence due in 7 days, a
// CHARGEBACK debit, webhook dispute.action_required. It returns the
// dispute's id.
func (f *Fake) OpenDispute(key string, amount int64, cat string) (string, error) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.prByRef(key)
	if pr == nil || pr.Status != "SUCCEEDED" {
		return "", fmt.Errorf("xenditfake: no paid payment request under %s", key)
	}
	d, err := f.openDispute(pr.LatestPaymentID, amount, cat)
	if err != nil {
		return "", err
	}
	return d.ID, nil
}

// openDispute opens a dispute of payment id. f.mu is held.
func (f *Fake) openDispute(paymentID string, amount int64, cat string) (*dispute, error) {
	py, ok := f.payments[paymentID]
	if !ok || py.Status != "SUCCEEDED" {
		return nil, fmt.Errorf("xenditfake: payment %s is not settled", paymentID)
	}
	pr := f.prs[py.PaymentRequestID]
	if amount <= 0 || amount > pr.amount {
		return nil, fmt.Errorf("xenditfake: dispute amount %d of a payment of %d", amount, pr.amount)
	}
	if cat == "" {
		cat = "general"
	}
	now := f.now()
	d := &dispute{
		ID: f.newID("mi-dspt-"), CreatedAt: stamp(now), UpdatedAt: stamp(now), ChannelCode: pr.ChannelCode, Status: "ACTION_REQUIRED",
		Currency: pr.Currency, Amount: disputeAmount{Initial: string(decimal(amount))}, DueDate: stamp(now.Add(7 * 24 * time.Hour)),
		Evidences: []evidence{}, Category: &category{Name: cat, Allowed: evidenceCategories}, RelatedDisputes: []string{},
		PaymentID: py.PaymentID, ReferenceID: py.ReferenceID, amount: amount,
	}
	f.disputes[d.ID] = d
	f.dsOrder = append(f.dsOrder, d.ID)
	f.txn("CHARGEBACK", "MONEY_OUT", d.ID, d.ReferenceID, d.Currency, amount, now)
	f.emitDispute("dispute.action_required", d)
	return d, nil
}

// openDisputeOf reports whether payment request id has a dispute not yet
// decided. f.mu is held.
func (f *Fake) openDisputeOf(id string) bool {
	for _, d := range f.disputes {
		if py := f.payments[d.PaymentID]; py != nil && py.PaymentRequestID == id && (d.Status == "ACTION_REQUIRED" || d.Status == "UNDER_REVIEW") {
			return true
		}
	}
	return false
}

// disputeEnvelope is the body of a dispute webhook: the event beside
// the dispute's fields.
func disputeEnvelope(event string, d *dispute) []byte {
	var m map[string]any
	_ = json.Unmarshal(clone(d), &m)
	m["event"] = event
	return clone(m)
}

// emitDispute queues a dispute webhook. f.mu is held.
func (f *Fake) emitDispute(event string, d *dispute) {
	if f.opt.WebhookURL != "" {
		f.outbox = append(f.outbox, disputeEnvelope(event, d))
	}
}

// disputeByRef is the newest dispute of the payment under reference_id
// key. f.mu is held.
func (f *Fake) disputeByRef(key string) *dispute {
	for i := len(f.dsOrder) - 1; i >= 0; i-- {
		if d := f.disputes[f.dsOrder[i]]; d.ReferenceID == key {
			return d
		}
	}
	return nil
}

func (f *Fake) getDispute(w http.ResponseWriter, id string) {
	getObject(f, w, f.disputes, id, "dispute")
}

// actionable returns the dispute id awaiting the merchant's action, or
// answers Xendit's error and returns nil. f.mu is held.
func (f *Fake) actionable(w http.ResponseWriter, id string) *dispute {
	d, ok := f.disputes[id]
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, "DATA_NOT_FOUND", "Dispute not found.")
		return nil
	case d.Status != "ACTION_REQUIRED":
		writeError(w, http.StatusBadRequest, "ILLEGAL_STATE", "The requested action is not allowed in the current dispute state.")
		return nil
	}
	return d
}

func (f *Fake) addEvidence(w http.ResponseWriter, r *http.Request, body []byte, id string) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "multipart/form-data is required")
		return
	}
	form, err := multipart.NewReader(strings.NewReader(string(body)), params["boundary"]).ReadForm(1 << 20)
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "unreadable multipart body")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.actionable(w, id)
	if d == nil {
		return
	}
	type failed struct {
		CategorySlug string `json:"category_slug"`
		ErrorCode    string `json:"error_code"`
		Reason       string `json:"reason"`
	}
	succeeded, failures := []evidence{}, []failed{}
	for slug, values := range form.Value {
		var allowed *allowedEvidence
		for i := range d.Category.Allowed {
			if d.Category.Allowed[i].Name == slug {
				allowed = &d.Category.Allowed[i]
			}
		}
		if allowed == nil {
			writeError(w, http.StatusBadRequest, "EVIDENCE_CATEGORY_NOT_ALLOWED", fmt.Sprintf("Evidence category '%s' is not allowed for this dispute's category.", slug))
			return
		}
		for _, v := range values {
			switch {
			case allowed.Type != "TEXT":
				failures = append(failures, failed{slug, "UNSUPPORTED_EVIDENCE_TYPE", "category " + slug + " takes a file"})
			case int64(utf8.RuneCountInString(v)) > allowed.MaxLength:
				failures = append(failures, failed{slug, "INVALID_REQUEST", "text is longer than the category takes"})
			default:
				e := evidence{ID: f.newID("mi-dspt-evd-"), Type: "TEXT", CategorySlug: slug, TextContent: v, CreatedAt: stamp(f.now())}
				d.Evidences = append(d.Evidences, e)
				d.text += v
				succeeded = append(succeeded, e)
			}
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"dispute_id": d.ID, "evidences_succeeded": succeeded, "evidences_failed": failures,
		"message": "Evidence processed successfully."})
}

func (f *Fake) challengeDispute(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.actionable(w, id)
	if d == nil {
		return
	}
	if len(d.Evidences) == 0 {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "No evidence items provided.")
		return
	}
	d.Status, d.UpdatedAt = "UNDER_REVIEW", stamp(f.now())
	f.emitDispute("dispute.under_review", d)
	switch {
	case strings.Contains(d.text, "winning_evidence"):
		f.decide(d, "WON", "CHALLENGED")
	case strings.Contains(d.text, "losing_evidence"):
		f.decide(d, "LOST", "CHALLENGED")
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"dispute_id": d.ID, "message": "Challenge accepted."})
}

func (f *Fake) acceptDispute(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.actionable(w, id)
	if d == nil {
		return
	}
	f.decide(d, "LOST", "ACCEPTED")
	writeJSON(w, http.StatusAccepted, map[string]string{"dispute_id": d.ID, "message": "Accept acknowledged."})
}

// decide ends a dispute: a won one credits its amount back. f.mu is held.
func (f *Fake) decide(d *dispute, status, reason string) {
	now := f.now()
	terminal := d.Amount.Initial
	d.Status, d.StatusReason, d.Amount.Terminal, d.UpdatedAt = status, &reason, &terminal, stamp(now)
	if status == "WON" {
		f.txn("CHARGEBACK", "MONEY_IN", d.ID, d.ReferenceID, d.Currency, d.amount, now)
		f.emitDispute("dispute.won", d)
		return
	}
	f.emitDispute("dispute.lost", d)
}

// DecideDispute makes the card network decide the dispute under review of
// the payment under key: won (a CHARGEBACK credit) or lost.
func (f *Fake) DecideDispute(key string, won bool) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.disputeByRef(key)
	if d == nil || d.Status != "UNDER_REVIEW" {
		return fmt.Errorf("xenditfake: no dispute under review of the payment under %s", key)
	}
	f.decide(d, map[bool]string{true: "WON", false: "LOST"}[won], "CHALLENGED")
	return nil
}

// simulateDispute serves the sandbox's POST /v1/disputes/simulate.
func (f *Fake) simulateDispute(w http.ResponseWriter, body []byte) {
	var in struct {
		Scenario  string `json:"scenario"`
		PaymentID string `json:"payment_id"`
		Amount    string `json:"amount"`
		Currency  string `json:"currency"`
		DisputeID string `json:"dispute_id"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "unreadable body")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := stamp(f.now())
	switch in.Scenario {
	case "CREATE_DISPUTE":
		amount, ok := parseAmount(json.RawMessage(`"` + in.Amount + `"`))
		if _, known := f.payments[in.PaymentID]; !known || !ok {
			writeError(w, http.StatusBadRequest, "PAYMENT_NOT_FOUND", "The specified payment was not found.")
			return
		}
		d, err := f.openDispute(in.PaymentID, amount, "")
		if err != nil {
			writeError(w, http.StatusBadRequest, "PAYMENT_NOT_SETTLED", "The specified payment is not in a settled state.")
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"dispute_id": d.ID, "created_at": now})
	case "DISPUTE_WON", "DISPUTE_LOST":
		d, ok := f.disputes[in.DisputeID]
		switch {
		case !ok:
			writeError(w, http.StatusBadRequest, "INVALID_REQUEST", "dispute_id is not a simulated dispute")
		case d.Status != "UNDER_REVIEW":
			writeError(w, http.StatusConflict, "ILLEGAL_STATE", "Evidence must be submitted before resolving a simulated dispute.")
		default:
			f.decide(d, strings.TrimPrefix(in.Scenario, "DISPUTE_"), "CHALLENGED")
			writeJSON(w, http.StatusAccepted, map[string]string{"dispute_id": d.ID, "created_at": d.CreatedAt})
		}
	default:
		writeError(w, http.StatusBadRequest, "INVALID_SCENARIO", "Invalid scenario.")
	}
}
