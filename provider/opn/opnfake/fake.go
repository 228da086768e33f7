// Package opnfake is a stateful fake of the Opn Payments (Omise) API
// endpoints the provider/opn adapter uses, for tests: charges with
// sources, charge expiry, QR documents, refunds, recipients, transfers,
// transactions, disputes and search, answering with the JSON objects of
// Opn's API reference (templates in fixtures/, written from the
// documentation) and its error objects. Idempotency-Key replays the first
// answer. Webhooks are signed as Opn signs them (Omise-Signature,
// Omise-Signature-Timestamp).
//
// A successful charge states its fee and fee_vat at the rates of Opn's
// documented charge example (transaction_fees: fee_rate 3.65 %, vat_rate
// 7 %, each rounded half up to a whole minor unit; Fee reports their sum)
// and names its transaction (GET /transactions/{id}), a credit of the net
// whose transferable_at, the fake's own choice, is 00:00 UTC three days
// after the payment unless Options.AvailableOn says otherwise. Refunds,
// disputes and sent transfers debit the balance, and a won dispute
// credits it back, transferable at once; GET /transactions lists them
// all (transactions.go).
//
// Disputes: Opn's test mode opens one through POST /charges/{id}/disputes
// (a dispute of the whole charge); OpenDispute opens one of any amount
// (the payer's bank disputes the payment). A dispute is open; updating its
// message (PATCH /disputes/{id}) is the merchant's response and makes it
// pending, and accepting it (PATCH /disputes/{id}/accept) makes it lost;
// both refuse a dispute that is not open (400 bad_request). As the fake's
// own test convention, a message containing winning_evidence wins the
// dispute at once and one containing losing_evidence loses it;
// DecideDispute decides a pending one. Events dispute.create,
// dispute.update and dispute.close carry the dispute. A charge with a
// dispute cannot be refunded (400 failed_refund).
//
// DisableSource makes the account lose a source type, as an account Opn
// has not enabled it for: a charge of it is refused (400 invalid_charge).
//
// Magic values: a charge amount ending in 901 fails at once
// (failure_code payment_rejected); a refund amount ending in 911 fails; a recipient account
// number 000111111116 makes its transfer fail (failure_code
// invalid_bank_account).
package opnfake

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/paykit/paykit/provider/opn"
)

//go:embed fixtures/*.json
var fixtures embed.FS

// InvalidAccount is the account number whose transfers fail.
const InvalidAccount = "000111111116"

// Options configures a Fake.
type Options struct {
	SecretKey string // required on every call (HTTP Basic user)
	PublicKey string // accepted too, as Opn accepts it for sources
	// WebhookSecret is the base64 secret events are signed with; default
	// a random one (see Fake.WebhookSecret).
	WebhookSecret string
	// WebhookURL, if set, receives every event, signed, synchronously.
	WebhookURL string
	// Now is the fake's clock; default time.Now.
	Now func() time.Time
	// AvailableOn is the transferable_at (whole seconds) of the
	// transaction of a charge paid at paid; default 00:00 UTC three days
	// after paid.
	AvailableOn func(paid time.Time) time.Time
	// Client posts webhooks; default http.DefaultClient.
	Client *http.Client
	// IgnoreIdempotencyKey makes the fake execute every request, as if
	// Opn did not honour Idempotency-Key (to test the adapter without it).
	IgnoreIdempotencyKey bool
	// PNG serves QR documents as PNG; default SVG (qrcode.svg), as in
	// Opn's documented charge objects.
	PNG bool
}

// Fake is the fake Opn API; it is an http.Handler.
type Fake struct {
	opt Options

	mu         sync.Mutex
	seq        int
	objects    map[string]map[string]any // id → object
	order      []string                  // ids, oldest first
	idem       map[string]stored         // method path key → first answer
	qr         map[string]string         // document path → QR payload
	recipients map[string]string         // recipient id → account number
	creates    map[string]int            // "charge:"+paykit_key → POST /charges that created one
	disabled   map[string]bool           // source types the account is not enabled for
	outbox     [][]byte                  // events to post once f.mu is released
}

type stored struct {
	status int
	body   []byte
}

// New returns a Fake.
func New(opt Options) *Fake {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.AvailableOn == nil {
		opt.AvailableOn = func(paid time.Time) time.Time { return paid.UTC().Truncate(24 * time.Hour).Add(72 * time.Hour) }
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	if opt.WebhookSecret == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		opt.WebhookSecret = base64.StdEncoding.EncodeToString(b)
	}
	return &Fake{
		opt: opt, objects: map[string]map[string]any{}, idem: map[string]stored{}, qr: map[string]string{},
		recipients: map[string]string{}, creates: map[string]int{}, disabled: map[string]bool{},
	}
}

// WebhookSecret is the base64 secret the fake signs events with.
func (f *Fake) WebhookSecret() string { return f.opt.WebhookSecret }

func template(name string) map[string]any {
	b, err := fixtures.ReadFile("fixtures/" + name + ".json")
	if err != nil {
		panic(err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		panic(err)
	}
	return m
}

func (f *Fake) newID(prefix string) string {
	f.seq++
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s_test_%d%s", prefix, f.seq, hex.EncodeToString(b))
}

func (f *Fake) now() string { return f.opt.Now().UTC().Format(time.RFC3339) }

// ServeHTTP serves the API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, _, ok := r.BasicAuth()
	if !ok || user == "" || (user != f.opt.SecretKey && !(user == f.opt.PublicKey && r.URL.Path == "/sources")) {
		writeError(w, http.StatusUnauthorized, "authentication_failure", "authentication failed")
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "malformed form")
		return
	}
	if strings.Contains(r.URL.Path, "/documents/") && r.Method == http.MethodGet {
		f.document(w, r)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" && r.Method == http.MethodPost && !f.opt.IgnoreIdempotencyKey {
		ik := r.Method + " " + r.URL.Path + " " + key
		f.mu.Lock()
		prev, seen := f.idem[ik]
		f.mu.Unlock()
		if seen {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(prev.status)
			_, _ = w.Write(prev.body)
			return
		}
		rec := httptest.NewRecorder()
		f.route(rec, r)
		f.mu.Lock()
		if _, raced := f.idem[ik]; !raced && rec.Code < 500 {
			f.idem[ik] = stored{rec.Code, rec.Body.Bytes()}
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	f.route(w, r)
}

func (f *Fake) route(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "charges":
		f.createCharge(w, r)
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "charges":
		f.get(w, "charge", parts[1])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "charges" && parts[2] == "expire":
		f.expire(w, parts[1])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "charges" && parts[2] == "refunds":
		f.createRefund(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 4 && parts[0] == "charges" && parts[2] == "refunds":
		f.getRefund(w, parts[1], parts[3])
	case r.Method == http.MethodGet && len(parts) == 1 && parts[0] == "search":
		f.search(w, r)
	case r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "recipients":
		f.createRecipient(w, r)
	case r.Method == http.MethodPost && len(parts) == 1 && parts[0] == "transfers":
		f.createTransfer(w, r)
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "transfers":
		f.get(w, "transfer", parts[1])
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "transfers":
		f.destroyTransfer(w, parts[1])
	case r.Method == http.MethodGet && len(parts) == 1 && parts[0] == "transactions":
		f.listTransactions(w, r)
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "transactions":
		f.get(w, "transaction", parts[1])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "charges" && parts[2] == "disputes":
		f.createDispute(w, parts[1])
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "disputes":
		f.get(w, "dispute", parts[1])
	case r.Method == http.MethodPatch && len(parts) == 2 && parts[0] == "disputes":
		f.updateDispute(w, r, parts[1])
	case r.Method == http.MethodPatch && len(parts) == 3 && parts[0] == "disputes" && parts[2] == "accept":
		f.acceptDispute(w, parts[1])
	default:
		writeError(w, http.StatusNotFound, "not_found", "the requested resource was not found")
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	e := template("error")
	e["code"], e["message"] = code, msg
	e["location"] = "https://www.omise.co/api-errors#" + strings.ReplaceAll(code, "_", "-")
	writeJSON(w, status, e)
}

// source types the fake accepts: currency and flow.
var sourceTypes = map[string]struct{ currency, flow string }{
	"promptpay":  {"THB", "offline"},
	"truemoney":  {"THB", "redirect"},
	"alipay":     {"THB", "redirect"},
	"wechat_pay": {"THB", "offline"},
	"fpx":        {"MYR", "redirect"},
	"duitnow_qr": {"MYR", "offline"},
	"touch_n_go": {"MYR", "redirect"},
}

func (f *Fake) createCharge(w http.ResponseWriter, r *http.Request) {
	amount, err := strconv.ParseInt(r.PostFormValue("amount"), 10, 64)
	if err != nil || amount <= 0 {
		writeError(w, http.StatusBadRequest, "invalid_charge", "amount must be a positive integer")
		return
	}
	ccy := strings.ToUpper(r.PostFormValue("currency"))
	typ := r.PostFormValue("source[type]")
	st, ok := sourceTypes[typ]
	f.mu.Lock()
	disabled := f.disabled[typ]
	f.mu.Unlock()
	switch {
	case !ok:
		writeError(w, http.StatusBadRequest, "invalid_charge", "source type "+typ+" is not supported")
		return
	case disabled:
		writeError(w, http.StatusBadRequest, "invalid_charge", "source type "+typ+" is not enabled for this account")
		return
	case ccy != st.currency:
		writeError(w, http.StatusBadRequest, "invalid_charge", "currency is not supported by this source type")
		return
	case typ == "truemoney" && r.PostFormValue("source[phone_number]") == "":
		writeError(w, http.StatusBadRequest, "invalid_charge", "phone_number is required")
		return
	case typ == "fpx" && (r.PostFormValue("source[bank]") == "" || r.PostFormValue("source[email]") == ""):
		writeError(w, http.StatusBadRequest, "invalid_charge", "bank and email are required")
		return
	}
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("chrg")
	c := template("charge")
	c["id"], c["location"], c["amount"], c["currency"], c["funding_currency"] = id, "/charges/"+id, amount, ccy, ccy
	c["created_at"], c["metadata"], c["return_uri"] = f.now(), metadata(r), nullable(r.PostFormValue("return_uri"))
	if e := r.PostFormValue("expires_at"); e != "" {
		c["expires_at"] = e
	}
	s := template("source")
	sid := f.newID("src")
	s["id"], s["location"], s["amount"], s["currency"], s["type"], s["flow"], s["created_at"] = sid, "/sources/"+sid, amount, ccy, typ, st.flow, f.now()
	for _, k := range []string{"bank", "email", "name", "phone_number"} {
		if v := r.PostFormValue("source[" + k + "]"); v != "" {
			s[k] = v
		}
	}
	host := "http://" + r.Host
	if st.flow == "offline" {
		doc := f.newID("docu")
		path := "/charges/" + id + "/documents/" + doc + "/downloads/" + strings.ToUpper(hex.EncodeToString([]byte(doc))[:16])
		country := map[string]string{"THB": "TH", "MYR": "MY"}[ccy]
		f.qr[path] = EMVCo(country, ccy, amount, BillReference(id))
		s["scannable_code"] = map[string]any{
			"object": "barcode", "type": "qr",
			"image": map[string]any{
				"object": "document", "livemode": false, "id": doc, "deleted": false, "filename": map[bool]string{true: "qrcode.png", false: "qrcode.svg"}[f.opt.PNG],
				"location": "/charges/" + id + "/documents/" + doc, "kind": "qr", "download_uri": host + path,
				"created_at": f.now(),
			},
		}
	} else {
		c["authorize_uri"] = host + "/payments/" + id + "/authorize"
	}
	c["source"] = s
	if amount%1000 == 901 { // declined at once by the payer's bank
		c["status"], c["failure_code"], c["failure_message"] = "failed", "payment_rejected", "the payment was rejected"
		setSourceStatus(c, "failed")
	}
	f.put(id, c)
	if k, _ := c["metadata"].(map[string]any)["paykit_key"].(string); k != "" {
		f.creates["charge:"+k]++
	}
	f.emit("charge.create", c)
	writeJSON(w, http.StatusOK, c)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func metadata(r *http.Request) map[string]any {
	m := map[string]any{}
	for k, v := range r.PostForm {
		if strings.HasPrefix(k, "metadata[") && strings.HasSuffix(k, "]") && len(v) > 0 {
			m[k[len("metadata["):len(k)-1]] = v[0]
		}
	}
	return m
}

func (f *Fake) put(id string, obj map[string]any) {
	if _, ok := f.objects[id]; !ok {
		f.order = append(f.order, id)
	}
	f.objects[id] = obj
}

// clone is a deep copy of obj, for answers and events.
func clone(obj map[string]any) map[string]any {
	b, _ := json.Marshal(obj)
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&m)
	return m
}

func (f *Fake) get(w http.ResponseWriter, kind, id string) {
	f.mu.Lock()
	obj, ok := f.objects[id]
	ok = ok && obj["object"] == kind
	if ok {
		obj = clone(obj)
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", kind+" "+id+" was not found")
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

func (f *Fake) expire(w http.ResponseWriter, id string) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.objects[id]
	if !ok || c["object"] != "charge" {
		writeError(w, http.StatusNotFound, "not_found", "charge "+id+" was not found")
		return
	}
	if c["status"] != "pending" {
		writeError(w, http.StatusBadRequest, "failed_expire", "charge is not pending")
		return
	}
	c["status"], c["expired"], c["expired_at"] = "expired", true, f.now()
	setSourceStatus(c, "expired")
	f.emit("charge.expire", c)
	writeJSON(w, http.StatusOK, clone(c))
}

func setSourceStatus(c map[string]any, status string) {
	if s, ok := c["source"].(map[string]any); ok {
		s["charge_status"] = status
	}
}

func (f *Fake) document(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	payload, ok := f.qr[r.URL.Path]
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "document was not found")
		return
	}
	if f.opt.PNG {
		png, err := qrcode.Encode(payload, qrcode.Medium, 256)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "internal_error", err.Error())
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
		return
	}
	svg, err := QRSVG(payload)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write(svg)
}

func (f *Fake) createRefund(w http.ResponseWriter, r *http.Request, chargeID string) {
	amount, err := strconv.ParseInt(r.PostFormValue("amount"), 10, 64)
	if err != nil || amount <= 0 {
		writeError(w, http.StatusBadRequest, "invalid_amount", "amount must be a positive integer")
		return
	}
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.objects[chargeID]
	if !ok || c["object"] != "charge" {
		writeError(w, http.StatusNotFound, "not_found", "charge "+chargeID+" was not found")
		return
	}
	if c["status"] != "successful" {
		writeError(w, http.StatusBadRequest, "invalid_charge", "charge is not refundable")
		return
	}
	if c["dispute"] != nil {
		writeError(w, http.StatusBadRequest, "failed_refund", "charge is disputed and cannot be refunded")
		return
	}
	total, _ := num(c["amount"])
	refunded, _ := num(c["refunded_amount"])
	if amount > total-refunded {
		writeError(w, http.StatusBadRequest, "invalid_amount", "amount exceeds the refundable amount")
		return
	}
	id := f.newID("rfnd")
	rf := template("refund")
	rf["id"], rf["location"], rf["amount"], rf["funding_amount"] = id, "/charges/"+chargeID+"/refunds/"+id, amount, amount
	rf["currency"], rf["funding_currency"], rf["charge"] = c["currency"], c["currency"], chargeID
	rf["metadata"], rf["created_at"] = metadata(r), f.now()
	if amount%1000 == 911 {
		rf["status"] = "failed"
	} else {
		c["refunded_amount"] = refunded + amount
		rf["transaction"] = f.transaction("debit", "refund.debit", id, c["currency"], amount, f.opt.Now())
	}
	f.put(id, rf)
	f.emit("refund.create", rf)
	writeJSON(w, http.StatusOK, clone(rf))
}

func num(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func (f *Fake) getRefund(w http.ResponseWriter, chargeID, id string) {
	f.mu.Lock()
	rf, ok := f.objects[id]
	if ok {
		rf = clone(rf)
	}
	f.mu.Unlock()
	if !ok || rf["object"] != "refund" || rf["charge"] != chargeID {
		writeError(w, http.StatusNotFound, "not_found", "refund "+id+" was not found")
		return
	}
	writeJSON(w, http.StatusOK, rf)
}

// search finds objects of scope whose id or metadata values contain the
// query, newest first.
func (f *Fake) search(w http.ResponseWriter, r *http.Request) {
	scope, query := r.Form.Get("scope"), r.Form.Get("query")
	switch scope {
	case "charge", "refund", "transfer", "recipient":
	default:
		writeError(w, http.StatusBadRequest, "search_scope", "scope is not searchable")
		return
	}
	f.mu.Lock()
	var data []any
	for i := len(f.order) - 1; i >= 0; i-- {
		obj := f.objects[f.order[i]]
		if obj["object"] != scope || !matches(obj, query) {
			continue
		}
		data = append(data, clone(obj))
	}
	f.mu.Unlock()
	s := template("search")
	s["scope"], s["query"], s["total"] = scope, query, len(data)
	if data == nil {
		data = []any{}
	}
	s["data"] = data
	writeJSON(w, http.StatusOK, s)
}

func matches(obj map[string]any, q string) bool {
	if q == "" {
		return true
	}
	if id, _ := obj["id"].(string); strings.Contains(id, q) {
		return true
	}
	md, _ := obj["metadata"].(map[string]any)
	for _, v := range md {
		if s, _ := v.(string); strings.Contains(s, q) {
			return true
		}
	}
	return false
}

func (f *Fake) createRecipient(w http.ResponseWriter, r *http.Request) {
	name, brand, number := r.PostFormValue("name"), r.PostFormValue("bank_account[brand]"), r.PostFormValue("bank_account[number]")
	if name == "" || brand == "" || number == "" {
		writeError(w, http.StatusBadRequest, "invalid_recipient", "name and bank_account are required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID("recp")
	rc := template("recipient")
	rc["id"], rc["location"], rc["name"], rc["type"] = id, "/recipients/"+id, name, r.PostFormValue("type")
	rc["metadata"], rc["created_at"] = metadata(r), f.now()
	rc["bank_account"] = map[string]any{
		"object": "bank_account", "brand": brand, "last_digits": number[max(0, len(number)-4):],
		"name": r.PostFormValue("bank_account[name]"), "created_at": f.now(),
	}
	f.put(id, rc)
	f.recipients[id] = number
	writeJSON(w, http.StatusOK, clone(rc))
}

func (f *Fake) createTransfer(w http.ResponseWriter, r *http.Request) {
	amount, err := strconv.ParseInt(r.PostFormValue("amount"), 10, 64)
	if err != nil || amount <= 0 {
		writeError(w, http.StatusBadRequest, "invalid_amount", "amount must be a positive integer")
		return
	}
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	recp := r.PostFormValue("recipient")
	number, ok := f.recipients[recp]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "recipient "+recp+" was not found")
		return
	}
	id := f.newID("trsf")
	t := template("transfer")
	t["id"], t["location"], t["amount"], t["net"], t["recipient"] = id, "/transfers/"+id, amount, amount, recp
	t["metadata"], t["created_at"] = metadata(r), f.now()
	f.put(id, t)
	f.emit("transfer.create", t)
	if number == InvalidAccount {
		t["failed"], t["sendable"], t["failure_code"], t["failure_message"] = true, false, "invalid_bank_account", "the bank account is invalid"
		f.emit("transfer.fail", t)
	}
	writeJSON(w, http.StatusOK, clone(t))
}

func (f *Fake) destroyTransfer(w http.ResponseWriter, id string) {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.objects[id]
	if !ok || t["object"] != "transfer" || t["deleted"] == true {
		writeError(w, http.StatusNotFound, "not_found", "transfer "+id+" was not found")
		return
	}
	if t["sent"] == true || t["failed"] == true {
		writeError(w, http.StatusBadRequest, "failed_deletion", "transfer was already sent")
		return
	}
	t["deleted"], t["sendable"] = true, false
	f.emit("transfer.destroy", t)
	writeJSON(w, http.StatusOK, map[string]any{"object": "transfer", "id": id, "livemode": false, "deleted": true, "metadata": t["metadata"]})
}

// byKey finds the newest object of kind ("" any) under paykit_key.
// f.mu is held.
func (f *Fake) byKey(kind, key string) map[string]any {
	for i := len(f.order) - 1; i >= 0; i-- {
		obj := f.objects[f.order[i]]
		if kind != "" && obj["object"] != kind {
			continue
		}
		if md, _ := obj["metadata"].(map[string]any); md["paykit_key"] == key {
			return obj
		}
	}
	return nil
}

// Approve makes the payer complete the pending charge under key:
// successful, event charge.complete.
func (f *Fake) Approve(key string) error { return f.complete(key, "successful") }

// Decline makes the pending charge under key fail (event
// charge.complete).
func (f *Fake) Decline(key string) error { return f.complete(key, "failed") }

func (f *Fake) complete(key, status string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.byKey("charge", key)
	if c == nil {
		return fmt.Errorf("opnfake: no charge under %s", key)
	}
	if c["status"] != "pending" {
		return fmt.Errorf("opnfake: charge %s is %s", c["id"], c["status"])
	}
	c["status"] = status
	if status == "successful" {
		c["authorized"], c["paid"], c["captured"], c["paid_at"], c["refundable"] = true, true, true, f.now(), true
		amount, _ := num(c["amount"])
		c["authorized_amount"], c["captured_amount"] = amount, amount
		f.settle(c, amount)
	} else {
		c["failure_code"], c["failure_message"] = "payment_rejected", "the payment was rejected by the payer"
	}
	setSourceStatus(c, status)
	f.emit("charge.complete", c)
	return nil
}

// PayTransfer marks the transfer under key sent and paid (events
// transfer.send, transfer.pay).
func (f *Fake) PayTransfer(key string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.byKey("transfer", key)
	if t == nil || t["deleted"] == true || t["failed"] == true {
		return fmt.Errorf("opnfake: no payable transfer under %s", key)
	}
	t["sent"], t["sent_at"], t["sendable"] = true, f.now(), false
	amount, _ := num(t["amount"])
	t["transaction"] = f.transaction("debit", "transfer.debit", str(t["id"]), t["currency"], amount, f.opt.Now())
	f.emit("transfer.send", t)
	t["paid"], t["paid_at"] = true, f.now()
	f.emit("transfer.pay", t)
	return nil
}

// FailTransfer makes the transfer under key fail (event transfer.fail).
func (f *Fake) FailTransfer(key string) error {
	defer f.flush()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.byKey("transfer", key)
	if t == nil || t["deleted"] == true || t["paid"] == true {
		return fmt.Errorf("opnfake: no open transfer under %s", key)
	}
	t["sent"], t["failed"], t["sendable"] = true, true, false
	t["failure_code"], t["failure_message"] = "insufficient_balance", "the balance is insufficient"
	f.emit("transfer.fail", t)
	return nil
}

// Received reports the amount and currency of the charge, refund or
// transfer under key.
func (f *Fake) Received(key string) (int64, string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	obj := f.byKey("", key)
	if obj == nil || obj["object"] == "recipient" {
		for i := len(f.order) - 1; i >= 0; i-- {
			o := f.objects[f.order[i]]
			if md, _ := o["metadata"].(map[string]any); md["paykit_key"] == key && o["object"] != "recipient" {
				obj = o
				break
			}
		}
	}
	if obj == nil || obj["object"] == "recipient" {
		return 0, "", false
	}
	amount, _ := num(obj["amount"])
	ccy, _ := obj["currency"].(string)
	return amount, strings.ToUpper(ccy), true
}

// DisableSource makes the account lose (or, with disabled false, regain)
// a source type, as when Opn has not enabled it: a charge of it is
// refused with Opn's 400 invalid_charge, and nothing is created.
func (f *Fake) DisableSource(typ string, disabled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disabled[typ] = disabled
}

// Charges is how many charges were created under key.
func (f *Fake) Charges(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates["charge:"+key]
}

// Webhook returns a signed webhook request of event eventKey (e.g.
// "charge.complete") about the newest charge, refund or transfer under
// key, or (dispute.*) the newest dispute of the charge under key, as Opn
// would POST it now.
func (f *Fake) Webhook(eventKey, key string) (*http.Request, error) {
	f.mu.Lock()
	kind := map[string]string{"charge": "charge", "refund": "refund", "transfer": "transfer"}[strings.Split(eventKey, ".")[0]]
	obj := f.byKey(kind, key)
	if strings.HasPrefix(eventKey, "dispute.") {
		obj = f.disputeOf(key)
	}
	var body []byte
	if obj != nil {
		body = f.event(eventKey, obj)
	}
	f.mu.Unlock()
	if obj == nil {
		return nil, fmt.Errorf("opnfake: nothing under %s for %s", key, eventKey)
	}
	target := f.opt.WebhookURL
	if target == "" {
		target = "http://merchant.invalid/webhooks/opn"
	}
	return f.signed(target, body)
}

// event is the body of an event about obj. f.mu is held.
func (f *Fake) event(eventKey string, obj map[string]any) []byte {
	ev := template("event")
	id := f.newID("evnt")
	ev["id"], ev["location"], ev["key"], ev["data"], ev["created_at"] = id, "/events/"+id, eventKey, clone(obj), f.now()
	b, _ := json.Marshal(ev)
	return b
}

func (f *Fake) signed(target string, body []byte) (*http.Request, error) {
	ts := f.opt.Now().Unix()
	sig, err := opn.Sign(f.opt.WebhookSecret, ts, body)
	if err != nil {
		return nil, err
	}
	r, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(opn.SignatureHeader, sig)
	r.Header.Set(opn.SignatureTimestampHeader, strconv.FormatInt(ts, 10))
	return r, nil
}

// emit queues an event for WebhookURL, if set. f.mu is held.
func (f *Fake) emit(eventKey string, obj map[string]any) {
	if f.opt.WebhookURL != "" {
		f.outbox = append(f.outbox, f.event(eventKey, obj))
	}
}

// flush posts the queued events, signed, in order, before the call that
// made them returns (f.mu is not held: the receiver may call the fake).
func (f *Fake) flush() {
	f.mu.Lock()
	out := f.outbox
	f.outbox = nil
	f.mu.Unlock()
	for _, body := range out {
		r, err := f.signed(f.opt.WebhookURL, body)
		if err != nil {
			continue
		}
		resp, err := f.opt.Client.Do(r)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}
