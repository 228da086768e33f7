package httpadapter

import (
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/paykit/paykit"
)

// The views and templates of the checkout app (checkout_pay.go).

// Templates of the checkout app: each page over the layout and the shared
// parts.
var (
	checkoutTmpl       = checkoutTemplate("checkout.html")
	checkoutActionTmpl = checkoutTemplate("checkout_action.html")
	checkoutResultTmpl = checkoutTemplate("result.html")
)

func checkoutTemplate(name string) *template.Template {
	return template.Must(payPage(name).ParseFS(payUI, "payui/checkout_parts.html"))
}

// checkoutPoll is how often the page's script asks for the payment status;
// checkoutRefresh how often the page reloads itself without JavaScript.
const (
	checkoutPoll    = 1500 * time.Millisecond
	checkoutRefresh = 5
)

// csrfCookie holds the form's CSRF secret; the form carries the same value.
const csrfCookie = "paykit_checkout_csrf"

// maxFormBytes bounds a checkout form body.
const maxFormBytes = 16 << 10

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// checkoutHeader is what every checkout page shows first.
type checkoutHeader struct {
	Merchant, Amount, Reference string
}

// checkoutFormView fills payui/checkout.html.
type checkoutFormView struct {
	checkoutHeader
	Action             string // the form's target: the page itself
	CSRF, SubmissionID string
	Methods            []methodView
	OnlyMethod         bool // one method (frozen, or the only eligible): its fields always show
	MethodError        string
	Fields             []fieldView
	Errors             []formError
}

type methodView struct {
	ID, Method, Label string
	Checked           bool
	Banks             []bankView
	BankID, BankField string
	BankError         string
}

type bankView struct {
	Code, Name          string
	Available, Selected bool
}

type fieldView struct {
	ID, Name, Label, Hint, Type, Autocomplete, Value, Error string
	Required                                                bool
}

// formError is one line of the form's error summary; Field is the id of
// the element it is about.
type formError struct {
	Field, Text string
}

// bankField is the form field of a method's bank choice.
func bankField(method string) string { return "options." + method + ".bank" }

// customerField is how the form asks for a payer field.
func customerField(name string) fieldView {
	switch name {
	case "name":
		return fieldView{Label: "Full name", Type: "text", Autocomplete: "name"}
	case "email":
		return fieldView{Label: "Email", Type: "email", Autocomplete: "email"}
	case "phone":
		return fieldView{Label: "Mobile number", Type: "tel", Autocomplete: "tel"}
	}
	label := strings.ReplaceAll(name, "_", " ")
	if label != "" {
		label = strings.ToUpper(label[:1]) + label[1:]
	}
	return fieldView{Label: label, Type: "text", Autocomplete: "off"}
}

// formErrorOf places the Service's validation error on the form: its
// param (customer.email, payment_method_options.bank) names the field, and
// the payer reads a sentence of their own instead of the API's message.
func formErrorOf(e *paykit.Error, method string) formError {
	missing := strings.Contains(e.Message, "required") || strings.Contains(e.Message, "missing")
	switch {
	case strings.HasPrefix(e.Param, "customer."):
		f := strings.TrimPrefix(e.Param, "customer.")
		label := strings.ToLower(customerField(f).Label)
		text := "Enter a valid " + label + "."
		if missing {
			text = "Enter your " + label + "."
		}
		return formError{Field: "customer-" + f, Text: text}
	case strings.HasPrefix(e.Param, "payment_method_options."):
		text := "Choose a bank that is available."
		if missing {
			text = "Choose your bank."
		}
		return formError{Field: "bank-" + strings.ToLower(method), Text: text}
	case e.Param == "payment_method":
		return formError{Field: "payment_method", Text: "Choose another payment method."}
	}
	return formError{Text: "The payment could not be started. Please check your details and try again."}
}

// methodLabels are the names payers know the methods by.
var methodLabels = map[string]string{
	"FPX": "FPX online banking", "PROMPTPAY": "PromptPay", "TRUEMONEY": "TrueMoney Wallet",
	"BANK_TRANSFER": "Bank transfer", "TNG": "Touch 'n Go eWallet", "BOOST": "Boost", "CARD": "Credit or debit card",
	"GRABPAY": "GrabPay", "ALIPAY": "Alipay", "UMOBILE": "U Mobile", "EMONEI": "eMonei", "DUITNOW_QR": "DuitNow QR",
	"WECHAT_PAY": "WeChat Pay", "UNIONPAY": "UnionPay",
}

func methodLabel(m string) string {
	if l, ok := methodLabels[m]; ok {
		return l
	}
	return m
}

// checkoutActionView fills payui/checkout_action.html.
type checkoutActionView struct {
	checkoutHeader
	statusWords
	Method   string // the method's label
	Continue string // link on to the Provider (redirect_to_url)
	Redirect string // set right after the submit: follow Continue at once
	QR       *qrView
	Transfer *transferView
	followView
	RefreshSeconds int
	PollMillis     int
	// Set for a payer back from the Provider (?checks=N): the page says
	// it is confirming until ConfirmMillis pass (RefreshURL counts the
	// refreshes without JavaScript), then returns to Plain.
	Confirming    bool
	RefreshURL    string
	ConfirmMillis int
	Plain         string
}

// checkoutConfirmChecks is how many refreshes (about a minute) the page of
// a payer back from the Provider says it is confirming the payment before
// it offers to continue paying again.
const checkoutConfirmChecks = 12

// returned marks the page as seen by a payer back from the Provider, at
// its checks-th refresh: a redirect action still waiting for its outcome
// is most likely paid, so the page says it is confirming.
func (v *checkoutActionView) returned(checks int) {
	if v.Continue == "" || v.PaymentStatus != paykit.PaymentRequiresAction {
		return
	}
	next := "?checks=" + strconv.Itoa(checks+1)
	v.RefreshURL, v.Self = next, next
	if checks >= checkoutConfirmChecks {
		return
	}
	v.Confirming = true
	v.statusWords = confirmingWords
	v.StatusText = "Confirming your payment."
	v.ConfirmMillis = (checkoutConfirmChecks - checks) * checkoutRefresh * 1000
}

type qrView struct{ ImageURL, ExpiresAt string }

type transferView struct {
	BankName, Account, Holder, Reference, Amount, ExpiresAt string
}

// followView is what the "follow" part needs: the status the page shows
// and where to ask for it.
type followView struct {
	PaymentStatus paykit.PaymentStatus
	StatusText    string
	StatusURL     string
	Self          string
}

// actionWords say what the payer does for each next action type.
var actionWords = map[string]statusWords{
	"redirect_to_url": {"Waiting for you", "Continue to pay", "wait",
		"You approve the payment on your bank's or wallet's page, then come back here."},
	"display_qr_code": {"Waiting for you", "Scan to pay", "wait",
		"Open your banking or wallet app and scan this code. This page moves on by itself once the payment is confirmed."},
	"bank_transfer_instructions": {"Waiting for you", "Transfer to pay", "wait",
		"Transfer exactly this amount from your bank account with the reference below. This page moves on by itself once the transfer is confirmed."},
}

// siblingLink turns a service URL of the pay handler (…/pay/{route}/{token})
// into a link relative to a checkout page (…/pay/checkouts/{token}), so
// that it works under the host's mount point and host name.
func siblingLink(route, serviceURL, suffix string) string {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return ""
	}
	last := path.Base(u.Path)
	if !strings.HasSuffix(last, suffix) || last == "/" || last == "." {
		return ""
	}
	return "../" + route + "/" + last
}

// payerTime is how a deadline is shown to the payer.
func payerTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}
