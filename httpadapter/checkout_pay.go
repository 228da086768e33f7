package httpadapter

import (
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// The checkout app: the payer's side of a hosted checkout, behind the
// signed checkout_url ({public-url}/pay/checkouts/{token}). Its pages are
// relative to their own address, so a host can serve NewPayHandler under
// any prefix or on another host name.
//
//	GET  /checkouts/{token}         the payment form, the next action, or
//	                                the result (or 303 to return_url)
//	POST /checkouts/{token}         start paying: 303 back to the page
//	GET  /checkouts/{token}/status  {"payment_status": …} for the page's script
//
// The form carries a per-render submission id, so a double submit or a
// resubmit after the back button is the same request to the Service, which
// never starts a second Provider attempt; and a CSRF token that must match
// an HttpOnly, SameSite=Lax cookie set with the form (double submit), so
// another site cannot post it.

func (p *payHandler) routeCheckouts() {
	p.handle("GET /checkouts/{token}", p.checkoutPage)
	p.handle("POST /checkouts/{token}", p.checkoutSubmit)
	p.handle("GET /checkouts/{token}/status", p.checkoutStatus)
}

// checkoutPage shows what the checkout needs from the payer now.
func (p *payHandler) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	pc, err := p.svc.OpenCheckout(r.Context(), token)
	if err != nil {
		return linkError(err)
	}
	pi := pc.Intent
	switch {
	case pi.Status == paykit.PaymentRequiresPaymentMethod:
		if pc.Checkout.Status != paykit.CheckoutOpen {
			return errLink
		}
		p.renderCheckoutForm(w, r, http.StatusOK, pc, nil, nil)
	case pi.Status.Terminal():
		if target := p.svc.CheckoutReturnURL(pc.Checkout); target != "" {
			redirect(w, target)
			return nil
		}
		v := newResultView(pi)
		v.Merchant = pc.MerchantName
		p.render(w, r, http.StatusOK, checkoutResultTmpl, v)
	default:
		v := newCheckoutActionView(pc, token)
		q := r.URL.Query()
		if q.Get("continue") == "1" && v.Continue != "" {
			v.Redirect = v.Continue
		}
		if checks, err := strconv.Atoi(q.Get("checks")); err == nil && checks >= 0 {
			v.returned(min(checks, checkoutConfirmChecks))
		}
		p.render(w, r, http.StatusOK, checkoutActionTmpl, v)
	}
	return nil
}

// checkoutSubmit starts the payment with the payer's choice and details.
// Whatever the outcome, the payer is sent back to the page (303), which
// shows the next action; bad details re-render the form with the errors.
func (p *payHandler) checkoutSubmit(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	pc, err := p.svc.OpenCheckout(r.Context(), token)
	if err != nil {
		return linkError(err)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errorf(paykit.CodeInvalidRequest, "", "The form could not be read.")
	}
	if err := checkValues(r.PostForm, "form field"); err != nil {
		return err // the error page: browsers never send such a form
	}
	self := url.PathEscape(token)
	if pc.Intent.Status != paykit.PaymentRequiresPaymentMethod {
		// A second submit, or the form again after the back button: the
		// payment has started, so show where it is.
		redirect(w, self)
		return nil
	}
	if !p.csrfOK(r) {
		p.renderCheckoutForm(w, r, http.StatusForbidden, pc, nil, []formError{{
			Text: "This form had expired, so nothing was paid. Please check your details and pay again.",
		}})
		return nil
	}
	method := r.PostForm.Get("payment_method")
	m := findMethod(pc.Methods, method)
	if m == nil {
		p.renderCheckoutForm(w, r, http.StatusUnprocessableEntity, pc, r.PostForm, []formError{{
			Field: "payment_method", Text: "Choose a payment method.",
		}})
		return nil
	}
	req := paykit.PayCheckoutRequest{
		PaymentMethod: method,
		Customer:      map[string]string{},
		Options:       map[string]string{},
		SubmissionID:  r.PostForm.Get("submission_id"),
	}
	for _, f := range customerFields(pc) {
		if v := strings.TrimSpace(r.PostForm.Get("customer." + f)); v != "" {
			req.Customer[f] = v
		}
	}
	if len(m.Banks) > 0 {
		if v := r.PostForm.Get(bankField(method)); v != "" {
			req.Options["bank"] = v
		}
	}
	pi, err := p.svc.PayCheckout(r.Context(), token, req)
	if err != nil {
		if errors.Is(err, paykit.ErrLinkInvalid) {
			return errLink
		}
		e := paykit.AsError(err)
		switch e.Code {
		case paykit.CodeInvalidState:
			redirect(w, self)
			return nil
		case paykit.CodeInvalidRequest, paykit.CodeMissingRequiredField, paykit.CodePaymentMethodUnavailable:
			p.renderCheckoutForm(w, r, http.StatusUnprocessableEntity, pc, r.PostForm, []formError{formErrorOf(e, method)})
			return nil
		}
		return err
	}
	if pi.NextAction != nil && pi.NextAction.Type == "redirect_to_url" {
		self += "?continue=1" // follow the redirect at once, once
	}
	redirect(w, self)
	return nil
}

// checkoutStatus answers the page's script: the payment's status only.
func (p *payHandler) checkoutStatus(w http.ResponseWriter, r *http.Request) error {
	pc, err := p.svc.OpenCheckout(r.Context(), r.PathValue("token"))
	if err != nil {
		return linkError(err)
	}
	p.writeJSON(w, r, http.StatusOK, map[string]any{
		"payment_status":  pc.Intent.Status,
		"checkout_status": pc.Checkout.Status,
	})
	return nil
}

// csrfOK checks the form's CSRF token against the cookie set with the form
// and refuses a post that the browser says comes from another site.
func (p *payHandler) csrfOK(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	c, err := r.Cookie(csrfCookie)
	form := r.PostForm.Get("csrf_token")
	return err == nil && len(c.Value) == 32 && subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) == 1
}

// csrfToken returns the CSRF secret of the payer's browser for this page,
// setting the cookie when it has none.
func csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		if _, err := hex.DecodeString(c.Value); err == nil {
			return c.Value
		}
	}
	v := randomHex(16)
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: v, Path: requestPath(r), HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
	return v
}

// renderCheckoutForm renders the payment form with a fresh submission id;
// form, when set, is what the payer sent (kept in the fields).
func (p *payHandler) renderCheckoutForm(w http.ResponseWriter, r *http.Request, status int, pc *paykit.PayerCheckout, form url.Values, errs []formError) {
	v := newCheckoutFormView(pc, r.PathValue("token"), form, errs)
	v.CSRF = csrfToken(w, r)
	v.SubmissionID = randomHex(16)
	p.render(w, r, status, checkoutTmpl, v)
}

func newCheckoutHeader(pc *paykit.PayerCheckout) checkoutHeader {
	c := pc.Checkout
	return checkoutHeader{Merchant: pc.MerchantName, Amount: formatMoney(c.Amount, c.Currency), Reference: c.MerchantReference}
}

func newCheckoutFormView(pc *paykit.PayerCheckout, token string, form url.Values, errs []formError) checkoutFormView {
	v := checkoutFormView{
		checkoutHeader: newCheckoutHeader(pc), Action: url.PathEscape(token), Errors: errs,
		OnlyMethod: len(pc.Methods) == 1,
	}
	chosen := form.Get("payment_method")
	if v.OnlyMethod {
		chosen = pc.Methods[0].Method
	}
	errFor := map[string]string{}
	for _, e := range errs {
		errFor[e.Field] = e.Text
	}
	v.MethodError = errFor["payment_method"]
	for _, m := range pc.Methods {
		mv := methodView{
			ID: "method-" + strings.ToLower(m.Method), Method: m.Method, Label: methodLabel(m.Method),
			Checked: m.Method == chosen,
		}
		if len(m.Banks) > 0 {
			mv.BankID, mv.BankField = "bank-"+strings.ToLower(m.Method), bankField(m.Method)
			mv.BankError = errFor[mv.BankID]
			picked := form.Get(mv.BankField)
			if picked == "" {
				picked = pc.Checkout.PaymentMethodOptions["bank"]
			}
			for _, b := range m.Banks {
				mv.Banks = append(mv.Banks, bankView{Code: b.Code, Name: b.Name, Available: b.Available, Selected: b.Code == picked})
			}
		}
		v.Methods = append(v.Methods, mv)
	}
	for _, f := range customerFields(pc) {
		fv := customerField(f)
		fv.ID, fv.Name = "customer-"+f, "customer."+f
		fv.Value = pc.Checkout.Customer[f]
		if form != nil {
			fv.Value = form.Get(fv.Name)
		}
		fv.Error = errFor[fv.ID]
		var needing []string
		for _, m := range pc.Methods {
			if slices.Contains(m.RequiredCustomerFields, f) {
				needing = append(needing, methodLabel(m.Method))
			}
		}
		fv.Required = len(needing) == len(pc.Methods)
		if !fv.Required {
			fv.Hint = "needed for " + strings.Join(needing, ", ")
		}
		v.Fields = append(v.Fields, fv)
	}
	return v
}

// customerFields is the union of the payer fields the methods need, in
// the order they first appear.
func customerFields(pc *paykit.PayerCheckout) []string {
	var out []string
	for _, m := range pc.Methods {
		for _, f := range m.RequiredCustomerFields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func findMethod(methods []paykit.PaymentMethod, name string) *paykit.PaymentMethod {
	for i := range methods {
		if methods[i].Method == name {
			return &methods[i]
		}
	}
	return nil
}

func newCheckoutActionView(pc *paykit.PayerCheckout, token string) checkoutActionView {
	pi := pc.Intent
	self := url.PathEscape(token)
	v := checkoutActionView{
		checkoutHeader: newCheckoutHeader(pc), Method: methodLabel(pi.PaymentMethod),
		RefreshSeconds: checkoutRefresh, PollMillis: int(checkoutPoll / time.Millisecond),
		Plain: self,
		followView: followView{
			PaymentStatus: pi.Status, StatusText: "Waiting for your payment.",
			StatusURL: self + "/status", Self: self,
		},
	}
	words, ok := paymentStatusWords[pi.Status]
	if !ok {
		words = paymentStatusWords[""]
	}
	if pi.Status == paykit.PaymentProcessing {
		v.StatusText = "Confirming your payment."
	}
	na := pi.NextAction
	if pi.Status == paykit.PaymentRequiresAction && na != nil {
		if w, ok := actionWords[na.Type]; ok {
			words = w
		}
		switch na.Type {
		case "redirect_to_url":
			v.Continue = siblingLink("continue", na.URL, "")
		case "display_qr_code":
			v.QR = &qrView{ImageURL: siblingLink("qr", na.ImageURL, ".png"), ExpiresAt: payerTime(na.ExpiresAt)}
		case "bank_transfer_instructions":
			v.Transfer = &transferView{
				BankName: na.BankName, Account: na.Account, Holder: na.Holder, Reference: na.Reference,
				Amount: formatMoney(na.Amount, na.Currency), ExpiresAt: payerTime(na.ExpiresAt),
			}
		}
	}
	v.statusWords = words
	return v
}
