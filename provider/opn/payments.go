package opn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png" // Opn's QR images may be PNG
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/enums"
)

// sourceSpec is how a paykit method maps to an Opn source type.
type sourceSpec struct {
	Type       string
	Country    string
	Currency   string
	NextAction string
	Fields     []string // required paykit customer fields
	Options    []string
	NoRefunds  bool
}

// sources is the table doc.go documents.
var sources = map[string]sourceSpec{
	"PROMPTPAY":  {Type: "promptpay", Country: "TH", Currency: "THB", NextAction: paykit.NextActionDisplayQRCode},
	"TRUEMONEY":  {Type: "truemoney", Country: "TH", Currency: "THB", NextAction: paykit.NextActionRedirectToURL, Fields: []string{"phone"}},
	"ALIPAY":     {Type: "alipay", Country: "TH", Currency: "THB", NextAction: paykit.NextActionRedirectToURL},
	"WECHAT_PAY": {Type: "wechat_pay", Country: "TH", Currency: "THB", NextAction: paykit.NextActionDisplayQRCode},
	"FPX":        {Type: "fpx", Country: "MY", Currency: "MYR", NextAction: paykit.NextActionRedirectToURL, Fields: []string{"email"}, Options: []string{"bank"}, NoRefunds: true},
	"DUITNOW_QR": {Type: "duitnow_qr", Country: "MY", Currency: "MYR", NextAction: paykit.NextActionDisplayQRCode},
	"TNG":        {Type: "touch_n_go", Country: "MY", Currency: "MYR", NextAction: paykit.NextActionRedirectToURL},
}

// Methods lists the paykit methods the adapter serves, in the contract's
// order.
func Methods() []string {
	var out []string
	for _, m := range enums.PaymentMethods {
		if _, ok := sources[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// FPXBanks are the FPX banks as paykit routes name them: the canonical
// Code and Opn's source[bank] code.
func FPXBanks() []paykit.Bank {
	return []paykit.Bank{
		{Code: "MAYBANK", Name: "Maybank2u", ProviderCode: "maybank2u", Available: true},
		{Code: "CIMB", Name: "CIMB Clicks", ProviderCode: "cimb", Available: true},
		{Code: "PUBLIC", Name: "Public Bank", ProviderCode: "public", Available: true},
		{Code: "RHB", Name: "RHB Now", ProviderCode: "rhb", Available: true},
		{Code: "HLB", Name: "Hong Leong Connect", ProviderCode: "hongleong", Available: true},
		{Code: "AMBANK", Name: "AmOnline", ProviderCode: "ambank", Available: true},
		{Code: "BSN", Name: "BSN", ProviderCode: "bsn", Available: true},
		{Code: "BIMB", Name: "Bank Islam", ProviderCode: "islam", Available: true},
		{Code: "AFFIN", Name: "Affin Bank", ProviderCode: "affin", Available: true},
		{Code: "ALLIANCE", Name: "Alliance Bank", ProviderCode: "alliance", Available: true},
		{Code: "AGRO", Name: "Agrobank", ProviderCode: "agro", Available: true},
		{Code: "MUAMALAT", Name: "Bank Muamalat", ProviderCode: "muamalat", Available: true},
		{Code: "RAKYAT", Name: "Bank Rakyat", ProviderCode: "rakyat", Available: true},
		{Code: "HSBC", Name: "HSBC", ProviderCode: "hsbc", Available: true},
		{Code: "KFH", Name: "Kuwait Finance House", ProviderCode: "kfh", Available: true},
		{Code: "OCBC", Name: "OCBC", ProviderCode: "ocbc", Available: true},
		{Code: "UOB", Name: "UOB", ProviderCode: "uob", Available: true},
	}
}

// Route returns the payment route template of a paykit method in a
// country: Environment, Provider and amounts are the caller's.
func Route(method, country string) (paykit.PaymentRoute, bool) {
	s, ok := sources[method]
	if !ok || s.Country != country {
		return paykit.PaymentRoute{}, false
	}
	r := paykit.PaymentRoute{
		Method: method, Country: s.Country, Currency: s.Currency, NextAction: s.NextAction,
		CustomerFields: append([]string(nil), s.Fields...), Options: append([]string(nil), s.Options...),
		NoRefunds: s.NoRefunds,
	}
	if method == "FPX" {
		r.Banks = FPXBanks()
	}
	return r, true
}

// charge is the part of Opn's charge object the adapter reads.
type charge struct {
	Object         string            `json:"object"`
	ID             string            `json:"id"`
	Amount         json.Number       `json:"amount"`
	Currency       string            `json:"currency"`
	Status         string            `json:"status"`
	AuthorizeURI   string            `json:"authorize_uri"`
	FailureCode    string            `json:"failure_code"`
	FailureMessage string            `json:"failure_message"`
	Expired        bool              `json:"expired"`
	ExpiresAt      string            `json:"expires_at"`
	Metadata       map[string]string `json:"metadata"`
	Fee            json.Number       `json:"fee"`         // Opn's fee, minor units, before VAT
	FeeVAT         json.Number       `json:"fee_vat"`     // the VAT on it
	Transaction    json.RawMessage   `json:"transaction"` // null, an id or an expanded transaction
	Source         *struct {
		Type          string `json:"type"`
		Flow          string `json:"flow"`
		ScannableCode *struct {
			Image *struct {
				DownloadURI string `json:"download_uri"`
			} `json:"image"`
		} `json:"scannable_code"`
	} `json:"source"`
}

// CreatePayment creates a charge with its source in one request
// (POST /charges with source[type]). It first searches for a charge
// under the Key, so that a retry never charges twice, and sends the Key
// as Idempotency-Key.
func (p *Provider) CreatePayment(ctx context.Context, req paykit.PaymentRequest) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	spec, ok := sources[req.Method]
	if !ok || !slices.Contains(p.methods, req.Method) {
		return paykit.Result{Outcome: paykit.OutcomeRefused, Detail: fmt.Sprintf("opn: method %s is not served", req.Method)}
	}
	if found := p.existing(ctx, "charge", req.Key); found != nil {
		return p.chargeResult(ctx, found)
	}
	form := url.Values{
		"amount":               {fmt.Sprint(req.Amount)},
		"currency":             {strings.ToLower(req.Currency)},
		"source[type]":         {spec.Type},
		"metadata[paykit_key]": {req.Key},
	}
	if req.ReturnURL != "" {
		form.Set("return_uri", req.ReturnURL)
	}
	// req.ExpiresAt is not sent: we found no expires_at create parameter
	// in Opn's Charge API; paykit expires the charge (CancelPayment).
	switch spec.Type {
	case "truemoney":
		form.Set("source[phone_number]", req.Customer["phone"])
	case "fpx":
		form.Set("source[bank]", req.Options["bank"])
		form.Set("source[email]", req.Customer["email"])
	}
	if name := req.Customer["name"]; name != "" {
		form.Set("source[name]", name)
	}
	r := p.call(ctx, http.MethodPost, "/charges", form, "paykit-charge-"+req.Key)
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil:
		return r.createErrorResult()
	}
	return p.chargeResult(ctx, r.body)
}

// InquirePayment reads the charge: by id (GET /charges/{id}) with a
// Reference, otherwise by a search on metadata paykit_key.
func (p *Provider) InquirePayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	if ref.Reference == "" {
		found, end := p.first(ctx, "charge", ref.Key)
		if end != nil {
			return *end
		}
		return p.chargeResult(ctx, found)
	}
	body, end := p.get(ctx, "/charges/"+url.PathEscape(ref.Reference))
	if end != nil {
		return *end
	}
	return p.chargeResult(ctx, body)
}

// CancelPayment expires a pending charge (POST /charges/{id}/expire) and
// answers its state afterwards.
func (p *Provider) CancelPayment(ctx context.Context, ref paykit.AttemptRef) paykit.Result {
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	id := ref.Reference
	if id == "" {
		found, end := p.first(ctx, "charge", ref.Key)
		if end != nil {
			return *end
		}
		var c charge
		if err := decodeJSON(found, &c); err != nil || c.ID == "" {
			return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: search gave an unreadable charge"}
		}
		if c.Status != "pending" {
			return p.chargeResult(ctx, found)
		}
		id = c.ID
	}
	r := p.call(ctx, http.MethodPost, "/charges/"+url.PathEscape(id)+"/expire", nil, "")
	switch {
	case r.fault != nil:
		return *r.fault
	case r.err != nil && r.status == http.StatusNotFound:
		return r.errorResult()
	case r.err != nil:
		// Not expirable (already final, say): its state is the answer.
		res := p.InquirePayment(ctx, paykit.AttemptRef{Key: ref.Key, Reference: id})
		res.Detail = r.errorDetail() + "; " + res.Detail
		return res
	}
	return p.chargeResult(ctx, r.body)
}

// chargeResult maps a charge object to a Result. A QR charge's payload
// is read from its image.
func (p *Provider) chargeResult(ctx context.Context, raw []byte) paykit.Result {
	var c charge
	if err := decodeJSON(raw, &c); err != nil || c.Object != "charge" || c.ID == "" {
		return paykit.Result{Outcome: paykit.OutcomeUnknown, Detail: "opn: answer is not a charge object"}
	}
	res := paykit.Result{Reference: c.ID, Detail: "opn: charge " + c.Status}
	switch c.Status {
	case "successful":
		res.Outcome = paykit.OutcomeSucceeded
		return p.withFee(ctx, c, res)
	case "failed":
		res.Outcome, res.FailureCode = paykit.OutcomeFailed, paykit.FailureProviderDeclined
		res.Detail = fmt.Sprintf("opn: charge failed: %s: %s", c.FailureCode, c.FailureMessage)
	case "expired", "reversed":
		res.Outcome = paykit.OutcomeCancelled
	case "pending":
		return p.pendingResult(ctx, c, res)
	default:
		res.Outcome = paykit.OutcomePending
		res.Detail = "opn: charge status " + c.Status + " not mapped"
	}
	return res
}

// pendingResult is the action a pending charge waits for: a QR code for
// offline sources with a scannable code, else the authorize_uri.
func (p *Provider) pendingResult(ctx context.Context, c charge, res paykit.Result) paykit.Result {
	res.Outcome = paykit.OutcomePending
	var expires time.Time
	if t, err := time.Parse(time.RFC3339, c.ExpiresAt); err == nil {
		expires = t
	}
	if c.Source != nil && c.Source.ScannableCode != nil && c.Source.ScannableCode.Image != nil && c.Source.ScannableCode.Image.DownloadURI != "" {
		data, err := p.qrPayload(ctx, c.Source.ScannableCode.Image.DownloadURI)
		if err != nil {
			// The charge exists; its code could not be read now. Pending:
			// an inquiry reads it again.
			res.Detail = "opn: charge pending; QR image unreadable: " + err.Error()
			return res
		}
		res.Outcome = paykit.OutcomeRequiresAction
		res.Action = &paykit.ProviderAction{Type: paykit.NextActionDisplayQRCode, QRData: data, ExpiresAt: expires}
		return res
	}
	if c.AuthorizeURI != "" {
		res.Outcome = paykit.OutcomeRequiresAction
		res.Action = &paykit.ProviderAction{Type: paykit.NextActionRedirectToURL, URL: c.AuthorizeURI, ExpiresAt: expires}
	}
	return res
}

// qrPayload downloads a charge's QR image (only from the API's own host:
// the request carries the secret key) and decodes its payload.
func (p *Provider) qrPayload(ctx context.Context, uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host != p.base.Host {
		return "", fmt.Errorf("download_uri host is not the API's")
	}
	u.Scheme = p.base.Scheme
	img, err := p.download(ctx, u.String())
	if err != nil {
		return "", err
	}
	return decodeQR(img)
}

// download fetches a document's bytes with the secret key.
func (p *Provider) download(ctx context.Context, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(p.secret, "")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 2<<20))
}

// decodeQR reads the payload of a QR image: PNG, or an SVG drawn with
// rect elements.
func decodeQR(data []byte) (string, error) {
	var img image.Image
	if bytes.Contains(data[:min(len(data), 512)], []byte("<svg")) {
		var err error
		if img, err = rasterSVG(data); err != nil {
			return "", err
		}
	} else {
		var err error
		if img, _, err = image.Decode(bytes.NewReader(data)); err != nil {
			return "", fmt.Errorf("image: %v", err)
		}
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		return "", err
	}
	// A rendered code is a pure barcode, which decodes fast; a scan-like
	// image needs the detector.
	res, err := qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		res, err = qrcode.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_TRY_HARDER: true})
	}
	if err != nil {
		return "", fmt.Errorf("qr: %v", err)
	}
	return res.GetText(), nil
}
