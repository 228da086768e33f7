package paykit

import "testing"

// TestFingerprintGolden pins the fingerprints of a set of requests:
// idempotency records live 24 hours, so a fingerprint must not change
// from one version to the next (a retry would answer 409).
func TestFingerprintGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		params any
		want   string
	}{
		{"payment_intent.create ", CreatePaymentIntentRequest{Amount: 15000, Currency: "MYR", Country: "MY", MerchantReference: "r-1",
			PaymentMethod: "FPX", Customer: map[string]string{"name": "A", "email": "a@example.com"}},
			"476bc2b12e1fa0c37dcb33e5c6df14f4c338d270cba27cd0c80e406d0d1066e0"},
		{"payment_intent.create ", CreatePaymentIntentRequest{Amount: 1, Currency: "THB", Country: "TH", MerchantReference: "<&> \"q\" \\ é \u2028 \x01",
			PaymentMethod: "PROMPTPAY", Customer: map[string]string{"z": "1", "a": "<>", "é": "\t"},
			PaymentMethodOptions: map[string]string{"bank": "BBL", "": "x"}, ReturnURL: "https://example.com/r?a=1&b=2"},
			"fb1c33351acc8f6b47e176e85d6a2e3bdf6de5457751ee558a8fc2b55cb597b9"},
		{"payment_intent.create ", CreatePaymentIntentRequest{Amount: 999999999999999999, Currency: "USDT", Country: "SG", MerchantReference: "x",
			PaymentMethod: "CARD", Customer: map[string]string{}, PaymentMethodOptions: map[string]string{}},
			"e62a60ef75b1ea1aa0e48a7f114d6f1997a2770d1e726669211f6e0a404bcf0e"},
		{"payment_intent.create ", CreatePaymentIntentRequest{},
			"d9fd4d3d87f03da6ce0ac3cc4e0f17203edd040ade00de6257bbaa2c1c80283e"},
		{"payment_intent.cancel pi_1", CancelPaymentIntentRequest{Reason: "no longer <needed>"},
			"81d37fdb3b5b975946123d2fe02ecbf31c0c5f70a029d504889f49089c70341d"},
		{"payment_intent.cancel pi_1", CancelPaymentIntentRequest{},
			"68aed179e350248180a6bd4a678a90923165960a97dccb10595858282f317961"},
		{"payout_intent.create ", CreatePayoutIntentRequest{Amount: 5000, Currency: "THB", Country: "TH", MerchantReference: "po-1",
			Recipient: Recipient{Type: "bank_account", AccountNumber: "1234567890", BankCode: "BBL", HolderName: "Somchai", HolderNameTH: "สมชาย"}},
			"40ba446b5c9afb9b9b288db23d304a67b37e1498c1871d2c999dbe865c30ae31"},
		{"payout_intent.cancel po_1", CancelPayoutIntentRequest{Reason: "r"},
			"c69f01fcbf271f72ba8c1f917c5a1a0f0f83d6ce04d7ad0a6861244936077b9f"},
		{"checkout.create ", CreateCheckoutRequest{Amount: 100, Currency: "MYR", Country: "MY", MerchantReference: "c-1",
			Customer: map[string]string{"email": "a@example.com"}, ReturnURL: "https://e.com/?x=<y>", Metadata: map[string]string{"b": "2", "a": "1"},
			PaymentMethod: "FPX", PaymentMethodOptions: map[string]string{"bank": "MBB"}},
			"29b270307c6db527d03afe9c0c4469dcd3c101651a95252f71e54a672ea91a95"},
		{"checkout.create ", CreateCheckoutRequest{Amount: 100, Currency: "MYR", Country: "MY", MerchantReference: "c-2"},
			"7779611952e72ddf0622ade98707f437552466578df4516b865383407f26d35c"},
		{"checkout.cancel co_1", struct{}{},
			"3fc5177aede40e8cffb1978ffc1cd55a39713dd7051c21159722c401d7f962a6"},
		{"refund.create ", CreateRefundRequest{PaymentIntent: "pi_1", MerchantReference: "rf-1", Amount: 50, Reason: "dup & late"},
			"df5f9f3e94ea723df610bdadf27dcb0bccedf5f220de2a315cbaf0058ed0c036"},
		{"refund.create ", CreateRefundRequest{PaymentIntent: "pi_1", MerchantReference: "rf-2"},
			"5e94cf41119be56dfb0c95552bf9a6f400cb10921a270fd69d2ff83531d5ac65"},
		{"webhook_endpoint.create ", CreateMerchantWebhookEndpointRequest{URL: "https://e.com/h", EnabledEvents: []string{"payment_intent.succeeded", "*"},
			Description: "main"},
			"7fc63740be2a5f6657988c5ca3cdd6a7e88fd61f165e3a9302c7cf72eaed40e0"},
		{"webhook_endpoint.create ", CreateMerchantWebhookEndpointRequest{URL: "https://e.com/h", EnabledEvents: []string{}},
			"8777ce4d8f10bea03440ac58aaae85553ec2fd643f9f741b7e7aca181c3f823f"},
	}
	for _, c := range cases {
		got, err := fingerprint(c.name, c.params)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %+v: fingerprint %s, want %s", c.name, c.params, got, c.want)
		}
	}
}
