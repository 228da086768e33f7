package sandboxsql_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/paykit/paykit"
	"github.com/paykit/paykit/provider/sandbox"
)

// The adapter's side of fees, settlement and disputes: what it declares,
// how it maps the PSP's words, and what it refuses to guess.

func TestAdapterDeclaresDisputesAndSettlement(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	caps := sandbox.New(sandbox.Config{}).Capabilities()
	is.True(caps.Has(paykit.CapDisputes | paykit.CapDisputeSimulation | paykit.CapSettlement | paykit.CapSettlementSimulation))
	is.True(caps.Has(paykit.CapPayments | paykit.CapCancel | paykit.CapRefunds | paykit.CapPayouts | paykit.CapPayerSimulation | paykit.CapReturns))
}

// TestDisputeReasonsRoundTrip opens a dispute for each of paykit's reasons:
// the PSP's answer maps back to the same reason.
func TestDisputeReasonsRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, stateDB{}, paykit.NewManualClock(start), interval)
	e.pay(t, "pi_reasons", "mch_a", "TNG", "MY", 60000)
	for _, r := range []paykit.DisputeReason{
		paykit.DisputeFraudulent, paykit.DisputeProductNotReceived, paykit.DisputeProductUnacceptable,
		paykit.DisputeDuplicate, paykit.DisputeCreditNotProcessed, paykit.DisputeGeneral,
	} {
		d, err := e.prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentKey: "pi_reasons", Amount: 100, Reason: r})
		is.NoErr(err)
		is.Equal(d.Reason, r)
		is.True(strings.Contains(d.Detail, "state=NEEDS_RESPONSE reason=")) // the PSP's words stay in Detail
		got, err := e.prov.InquireDispute(ctx, d.Reference)
		is.NoErr(err)
		is.Equal(got, d)
	}
}

// TestAdapterInProcess: with Config.PSP the adapter calls the PSP in this
// process, its disputes and settlement included.
func TestAdapterInProcess(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	clock := paykit.NewManualClock(start)
	psp := sandbox.NewPSP(sandbox.PSPConfig{APIKey: apiKey, Delay: delay, Now: clock.Now, SettlementInterval: interval})
	prov := sandbox.New(sandbox.Config{PSP: psp, APIKey: apiKey})
	r := prov.CreatePayment(ctx, paykit.PaymentRequest{
		Key: "pi_local", Amount: 10000, Currency: "MYR", Country: "MY", Method: "CARD",
		Customer: map[string]string{"name": "Aisyah Rahman", "email": "aisyah@example.com"}, Merchant: "mch_local",
	})
	is.Equal(r.Outcome, paykit.OutcomeRequiresAction)
	is.NoErr(prov.Approve(ctx, "pi_local"))
	paid := prov.InquirePayment(ctx, paykit.AttemptRef{Key: "pi_local"})
	is.Equal(paid.Fee, int64(390))
	is.Equal(paid.AvailableOn, start.Add(4*time.Hour))
	d, err := prov.OpenDispute(ctx, paykit.DisputeOpening{PaymentRef: paid.Reference, Amount: 2500, Reason: paykit.DisputeDuplicate})
	is.NoErr(err)
	d, err = prov.SubmitDisputeEvidence(ctx, d.Reference, "winning_evidence")
	is.NoErr(err)
	is.Equal(d.Status, paykit.DisputeUnderReview)
	clock.Set(start.Add(4 * time.Hour))
	first, err := prov.SettlementBatches(ctx, "", 1)
	is.NoErr(err)
	is.Equal(summaries(first, map[string]string{d.Reference: "d"}), []string{
		"mch_local MYR 06-01T12:00:00: payment pi_local 10000 390; dispute d -2500 1500; dispute_reversal d 2500 0;",
	})
	is.Equal([]int64{first[0].Gross, first[0].Fee, first[0].Net}, []int64{10000, 1890, 8110}) // the PSP's totals
	rest, err := prov.SettlementBatches(ctx, first[0].Reference, 10)
	is.NoErr(err)
	is.Equal(len(rest), 0)
	now, err := prov.SettleNow(ctx, "mch_local")
	is.NoErr(err)
	is.Equal(len(now), 0)
}

// TestBatchStoredWithoutTotals: a batch stored before the PSP stated
// totals is answered with the totals of its lines, on every database.
func TestBatchStoredWithoutTotals(t *testing.T) {
	t.Parallel()
	for _, b := range sqlBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			db := b.open(t)
			e := newEnv(t, db, paykit.NewManualClock(start), interval)
			old := `{"id":"stl_old","merchant":"mch_old","ccy":"MYR","settled_at":"2026-06-01T06:00:00Z","lines":[` +
				`{"type":"PAYMENT","reference":"pay_1","idempotency_key":"pi_1","amount_minor":10000,"fee_minor":290,"ccy":"MYR"},` +
				`{"type":"REFUND","reference":"rfd_1","idempotency_key":"re_1","amount_minor":-4000,"fee_minor":0,"ccy":"MYR"}]}`
			_, err := db.db.NewInsert().Model(&map[string]any{"id": "stl_old", "merchant": "mch_old", "data": old}).
				TableExpr("sandbox_settlement_batches").Exec(context.Background())
			is.NoErr(err)
			got, err := e.prov.SettlementBatches(context.Background(), "", 10)
			is.NoErr(err)
			is.Equal(len(got), 1)
			is.Equal([]int64{got[0].Gross, got[0].Fee, got[0].Net}, []int64{6000, 290, 5710})
		})
	}
}

// TestSettlementListRefusals: a cursor that names no batch, a limit out of
// range and an unknown parameter are refused, and the adapter reports
// them as errors.
func TestSettlementListRefusals(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := newEnv(t, stateDB{}, paykit.NewManualClock(start), interval)
	_, err := e.prov.SettlementBatches(context.Background(), "stl_nosuch", 10)
	is.True(err != nil && strings.Contains(err.Error(), "ERR_VALIDATION"))
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=stl_1"} {
		status, _ := e.raw(t, http.MethodGet, "/api/settlements?"+q, "")
		is.Equal(status, http.StatusBadRequest) // q
	}
	status, body := e.raw(t, http.MethodGet, "/api/settlements?limit=100", "")
	is.Equal(status, http.StatusOK)
	is.Equal(strings.TrimSpace(body), `{"data":[],"has_more":false}`)
}

// TestPaymentMerchantIsPartOfTheRequest: the same key with another
// merchant is another request (409), and the merchant is answered.
func TestPaymentMerchantIsPartOfTheRequest(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, stateDB{}, paykit.NewManualClock(start), interval)
	req := paykit.PaymentRequest{
		Key: "pi_m", Amount: 1000, Currency: "MYR", Country: "MY", Method: "TNG",
		Customer: map[string]string{"name": "Aisyah Rahman"}, Merchant: "mch_a",
	}
	is.Equal(e.prov.CreatePayment(ctx, req).Outcome, paykit.OutcomeRequiresAction)
	is.Equal(e.prov.CreatePayment(ctx, req).Outcome, paykit.OutcomeRequiresAction)
	req.Merchant = "mch_b"
	is.True(strings.Contains(e.prov.CreatePayment(ctx, req).Detail, "ERR_IDEMPOTENCY"))
	status, body := e.raw(t, http.MethodGet, "/api/payments/pi_m", "")
	is.Equal(status, http.StatusOK)
	is.True(strings.Contains(body, `"merchant":"mch_a"`))
}

// TestDisputeCallbackParsing: a signed dispute callback maps to a
// CallbackEvent of kind dispute; one without its dispute, or in a state
// the adapter does not know, is an error.
func TestDisputeCallbackParsing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	prov := sandbox.New(sandbox.Config{APIKey: apiKey})
	parse := func(body string) ([]paykit.CallbackEvent, error) {
		r := httptest.NewRequest(http.MethodPost, "/providers/sandbox/webhooks", strings.NewReader(body))
		m := hmac.New(sha256.New, []byte(apiKey))
		m.Write([]byte(body))
		r.Header.Set(sandbox.SignatureHeader, hex.EncodeToString(m.Sum(nil)))
		return prov.ParseCallback(context.Background(), r)
	}
	dispute := `{"id":"dsp_1","state":"%s","payment_key":"pi_1","payment_id":"pay_1","amount_minor":700,"ccy":"THB",` +
		`"fee_minor":1500,"reason":"NOT_AS_DESCRIBED","evidence_due_by":"2026-06-08T08:00:00Z",` +
		`"created_at":"2026-06-01T08:00:00Z","updated_at":"2026-06-01T08:00:02Z"}`
	evs, err := parse(`{"id":"evt_1","kind":"dispute","key":"dsp_1","ref":"dsp_1","state":"WON","dispute":` + strings.Replace(dispute, "%s", "WON", 1) + `}`)
	is.NoErr(err)
	is.Equal(len(evs), 1)
	is.Equal(evs[0].Kind, "dispute")
	is.Equal(evs[0].ID, "evt_1")
	is.Equal(*evs[0].Dispute, paykit.ProviderDispute{
		Reference: "dsp_1", PaymentKey: "pi_1", PaymentRef: "pay_1", Amount: 700, Currency: "THB", Fee: 1500,
		Reason: paykit.DisputeProductUnacceptable, Status: paykit.DisputeWon,
		EvidenceDueBy: start.Add(7 * 24 * time.Hour), Detail: "state=WON reason=NOT_AS_DESCRIBED",
	})
	_, err = parse(`{"id":"evt_2","kind":"dispute","key":"dsp_1","state":"WON"}`)
	is.True(err != nil) // no dispute
	_, err = parse(`{"id":"evt_3","kind":"dispute","key":"dsp_1","state":"PAID","dispute":` + strings.Replace(dispute, "%s", "PAID", 1) + `}`)
	is.True(err != nil) // a state it does not know

	evs, err = parse(`{"id":"evt_4","kind":"payment","key":"pi_1","state":"SUCCESS","fee_minor":390,"available_on":"2026-06-02T00:00:00Z"}`)
	is.NoErr(err)
	is.Equal(evs[0].Result.Fee, int64(390))
	is.Equal(evs[0].Result.AvailableOn, start.Add(16*time.Hour))
}
