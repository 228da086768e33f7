package httpadapter

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/internal/validated"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// decodeCorpus is a set of request bodies, valid and not, with one or
// several faults, for TestDecodeGolden.
func decodeCorpus(t *testing.T) []string {
	payment := `{"amount":"15000","currency":"MYR","country":"MY","merchant_reference":"r-1","payment_method":"FPX","customer":{"name":"A","email":"a@example.com"}}`
	return []string{
		validSample, payment, " \n" + payment + "\t\r\n",
		withField(t, "items", `[]`), withField(t, "items", `null`), withField(t, "recipient", `null`),
		withField(t, "metadata", `{"a\"b":"\u00e9\n","":"x"}`), withField(t, "amount", `"\u0031"`),
		withField(t, "items", `[{"sku":"a","quantity":1},{"quantity":-2,"sku":"b"}]`),
		"", " ", "\n\t", "null", "[]", `"x"`, "1", "true", "{", "}", "{}", " {} ", `{"amount"}`, `{"amount":}`, `{"amount":"1",}`, `{,}`,
		payment + payment, payment + " x", payment + "{}", payment + "}", "{}{}", "null x", "[] []", "[1,", `"x" 1`, "\xef\xbb\xbf{}",
		`{"AMOUNT":"1"}`, `{"Amount":"1"}`, `{"amount":"1","Amount":"2"}`, `{"am\u006funt":"1"}`,
		`{"amount":1}`, `{"amount":{}}`, `{"amount":[]}`, `{"amount":true}`, `{"amount":null}`,
		`{"customer":{"name":1}}`, `{"customer":[]}`, `{"customer":"x"}`, `{"customer":{"name":"A"},"customer":{"email":1}}`,
		`{"customer":{"name":"A"},"customer":{"email":"b"}}`, `{"currency":"MYR","currency":"THB"}`, `{"currency":"MYR","currency":1}`,
		`{"merchant_reference":"bad \xff"}`, `{"merchant_reference":"nul \u0000"}`, `{"x\u0000":1}`, `{"\xff":1}`,
		`{"customer":{"\xff":"x"}}`, `{"customer":{"a\u0000":"x"}}`, `{"customer":{"a":"\u0000"}}`, `{"customer":{"a":"\xc3"}}`,
		`{"merchant_reference":"\ud800"}`, `{"merchant_reference":"\udc00x"}`, `{"merchant_reference":"<&>\u2028"}`, `{"merchant_reference":"a\/b"}`,
		`{"zzz":1,"aaa":2}`, `{"zzz":1,"amount":5}`, `{"currency":2,"amount":1}`, `{"zzz":1,"merchant_reference":"\xff"}`,
		`{"merchant_reference":"\xff","zzz":1}`, `{"amount":1,"merchant_reference":"\u0000"}`, `{"zzz":"\xff"}`,
		`{"recipient":{"zzz":1},"amount":1}`, `{"customer":{"b":1,"a":2}}`, `{"items":[{"zz":1},{"aa":1}]}`,
		`{"items":[{"quantity":"x","zz":1}]}`, `{"items":[{"quantity":1.0}]}`, `{"items":[{"quantity":-0}]}`, `{"items":[{"quantity":1E0}]}`,
		`{"items":[{"quantity":9223372036854775807}]}`, `{"items":[{"quantity":9223372036854775808}]}`, `{"items":[{"quantity":01}]}`,
		`{"amount":"1","expire_previous_after":5}`, `{"expire_previous_after":-1}`, `{"expire_previous_after":1.5}`, `{"expire_previous_after":"5"}`,
		`{"reason":null}`, `{"reason":""}`, `{"reason":"x"}`, `{"reason":1}`, `{"name":"n"}`, `{"environment":"test"}`, `{"note":"n"}`,
		`{"environment":"test","url":"https://example.com/h"}`, `{"url":"https://example.com/h","enabled_events":["*"]}`,
		`{"url":"https://example.com/h","enabled_events":"*"}`, `{"url":"https://example.com/h","enabled_events":[1]}`,
		`{"environment":"test","currency":"MYR","amount":"-500","reason":"r"}`,
		`{"payment_intent":"pi_1","merchant_reference":"r","amount":"100","reason":"x"}`, `{"payment_intent":"pi_1","merchant_reference":"r","amount":null}`,
		`{"amount":"100","currency":"MYR","country":"MY","merchant_reference":"r","recipient":{"type":"bank_account","account_number":"12345","bank_code":"MBB","holder_name":"H"}}`,
		`{"amount":"100","currency":"MYR","country":"MY","merchant_reference":"r","recipient":{"type":"bank_account","account_number":"12345","bank_code":"MBB","holder_name":"H","Bank_code":"x"}}`,
		withField(t, "Amount", `"1"`), withField(t, "recipient.bank", `"BBL"`), withField(t, "items.0.price", `"1"`),
		withField(t, "items.0.Quantity", `1`), withField(t, "items.0.quantity", `"2"`), withField(t, "items.0.quantity", `1.5`),
		`{"items":[{"sku":"a","quantity":1e2}]}`, `{"items":[{"sku":"a","quantity":99999999999999999999}]}`,
		withField(t, "items", `{}`), withField(t, "items", `[1]`), withField(t, "recipient", `"x"`),
		withField(t, "metadata.note", `1`), withField(t, "metadata", `[]`), withField(t, "customer", `{"name":"A","name":2}`),
		`{"items":[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]}`,
		`{"metadata":{"a":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 101) + `}`,
		`{"metadata":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat("}", 20001),
	}
}

// TestDecodeGolden holds decodeJSON followed by validated.Check (what
// decodeBody answers) to the answers recorded in
// testdata/decode_golden.txt, for every body of decodeCorpus into every
// request body type: the same error (code, param, message), or the same
// decoded value. Run with -update to record them anew.
func TestDecodeGolden(t *testing.T) {
	// Zero values of every request body type.
	dsts := []any{
		sampleRequest{}, createPaymentIntentBody{}, createCheckoutBody{}, createPayoutIntentBody{}, createRefundBody{},
		balanceAdjustmentBody{}, cancelRequest{}, rotateSecretRequest{}, approvePayoutRequest{}, rejectPayoutRequest{},
		createMerchantRequest{}, createAPIKeyRequest{}, checkoutCancelRequest{}, paykit.CreateWebhookEndpointRequest{},
		paykit.CreateMerchantWebhookEndpointRequest{}, paykit.UpdateMerchantWebhookEndpointRequest{},
	}
	var out bytes.Buffer
	for _, body := range decodeCorpus(t) {
		shown := body
		if len(shown) > 300 {
			shown = shown[:300] + fmt.Sprintf("...(%d bytes)", len(body))
		}
		fmt.Fprintf(&out, "BODY %q\n", shown)
		for _, zero := range dsts {
			dst := reflect.New(reflect.TypeOf(zero)).Interface()
			err := decodeJSON([]byte(body), dst)
			if err == nil {
				err = validated.Check(dst)
			}
			if err != nil {
				e := paykit.AsError(err)
				fmt.Fprintf(&out, "  %T: %s param=%q message=%q\n", dst, e.Code, e.Param, e.Message)
				continue
			}
			v, merr := json.Marshal(dst)
			if merr != nil {
				t.Fatal(merr)
			}
			fmt.Fprintf(&out, "  %T: ok %s\n", dst, v)
		}
	}
	const file = "testdata/decode_golden.txt"
	if *updateGolden {
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		body := ""
		for i := 0; i < len(gl) || i < len(wl); i++ {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if strings.HasPrefix(w, "BODY") {
				body = w
			}
			if g != w {
				t.Errorf("%s\n got %s\nwant %s", body, g, w)
			}
		}
	}
}
