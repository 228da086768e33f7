package httpadapter

import (
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit/internal/enums"
)

func TestSiblingLink(t *testing.T) {
	is := is.New(t)
	// Service URLs become links relative to /pay/checkouts/{token}.
	is.Equal(siblingLink("continue", "https://pay.example/pay/continue/abc.def", ""), "../continue/abc.def")
	is.Equal(siblingLink("qr", "http://127.0.0.1:8080/pay/qr/abc.def.png", ".png"), "../qr/abc.def.png")
	is.Equal(siblingLink("qr", "http://127.0.0.1:8080/pay/qr/abc.def", ".png"), "") // not an image link
	is.Equal(siblingLink("continue", "", ""), "")
	is.Equal(siblingLink("continue", "://bad", ""), "")
}

func TestPayerTime(t *testing.T) {
	is := is.New(t)
	is.Equal(payerTime(time.Time{}), "")
	at := time.Date(2026, 6, 1, 16, 5, 0, 0, time.FixedZone("MYT", 8*3600))
	is.Equal(payerTime(at), "1 Jun 2026, 08:05 UTC")
}

func TestFormErrorOf(t *testing.T) {
	is := is.New(t)
	is.Equal(formErrorOf(invalidRequest("customer.email", "customer.email is required."), "FPX"),
		formError{Field: "customer-email", Text: "Enter your email."})
	is.Equal(formErrorOf(invalidRequest("customer.email", "customer.email must be an email address."), "FPX"),
		formError{Field: "customer-email", Text: "Enter a valid email."})
	is.Equal(formErrorOf(invalidRequest("customer.national_id", "customer.national_id is required."), "FPX"),
		formError{Field: "customer-national_id", Text: "Enter your national id."})
	is.Equal(formErrorOf(invalidRequest("payment_method_options.bank", "unknown bank"), "FPX"),
		formError{Field: "bank-fpx", Text: "Choose a bank that is available."})
	is.Equal(formErrorOf(invalidRequest("payment_method", "not available"), "FPX"),
		formError{Field: "payment_method", Text: "Choose another payment method."})
	// Anything else: a general line, no API wording.
	e := formErrorOf(invalidRequest("amount", "amount must be a positive integer string."), "FPX")
	is.Equal(e.Field, "")
	is.True(e.Text != "")
}

func TestMethodLabels(t *testing.T) {
	is := is.New(t)
	for _, m := range enums.PaymentMethods {
		is.True(methodLabels[m] != "") // every contract method has a payer name
	}
	is.Equal(methodLabel("NEW_METHOD"), "NEW_METHOD")
}
