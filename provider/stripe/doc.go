// Package stripe is the paykit Provider adapter for Stripe: payments
// through the PaymentIntents API (cards through Stripe Checkout) with
// Stripe's fees, cancels, refunds, disputes, settlement reports (the
// account's payouts) and signed webhooks. It declares paykit.CapPayments,
// paykit.CapCancel, paykit.CapRefunds, paykit.CapDisputes and
// paykit.CapSettlement. It is no paykit.PayoutProvider:
// Stripe payouts move an account's own balance to its own bank account,
// they do not send money to third parties' bank accounts (that is Stripe
// Connect, another product), so paykit payouts cannot be served.
//
// # Methods
//
// Every payment is created under the attempt's Key as Stripe's
// Idempotency-Key header (hashed when longer than Stripe's 255
// characters), with metadata[paykit_key] = Key so that webhooks, search
// and lists map back to it:
//
//   - FPX (MY, MYR): POST /v1/payment_intents, confirm=true,
//     payment_method_data[type]=fpx and [fpx][bank] (the route's bank,
//     Stripe's code: maybank2u, cimb, public_bank, ...), return_url. Next
//     action redirect_to_url.url: a redirect.
//   - GRABPAY (MY MYR, SG SGD): the same with type grabpay; redirect.
//   - ALIPAY (MY MYR, SG SGD): type alipay; next action
//     alipay_handle_redirect.url: a redirect.
//   - PROMPTPAY (TH, THB): type promptpay with
//     payment_method_data[billing_details][email] (Stripe requires the
//     payer's email); next action promptpay_display_qr_code.data, the
//     EMVCo payload, becomes Action.QRData.
//   - WECHAT_PAY (SG, SGD): type wechat_pay with
//     payment_method_options[wechat_pay][client]=web; next action
//     wechat_pay_display_qr_code becomes a redirect to its
//     hosted_instructions_url, Stripe's page showing the code: its data is
//     a weixin:// URL, not the EMVCo payload of paykit's display_qr_code.
//   - CARD (MY, TH, SG): a Checkout Session in payment mode
//     (POST /v1/checkout/sessions, one price_data line item, success_url
//     and cancel_url = ReturnURL, payment_intent_data[metadata] carrying
//     the Key), so card data is entered on Stripe's page and never touches
//     the host. The Reference is the session id (cs_...); inquiries read
//     the session (open: a redirect to session.url; complete and paid:
//     succeeded; expired: cancelled), cancel expires it, and a refund
//     refunds its PaymentIntent. A declined card leaves the session open:
//     the payer may try another.
//
// No expiry is sent: paykit cancels an expired attempt (for CARD,
// expiring the session, whose own default lifetime is 24 hours).
//
// The API version is stripe-go v85's (Stripe-Version 2026-03-25.dahlia),
// and the adapter reads only fields that are the same in the versions
// since 2022-08-01 (a Checkout Session's payment_intent may be null until
// payment).
//
// Route(method, country) returns the paykit.PaymentRoute templates of
// these, and Methods the paykit methods the adapter serves.
//
// # Outcomes
//
// PaymentIntent status: requires_action is RequiresAction with the Action
// above; processing (and requires_confirmation, requires_capture) Pending;
// succeeded Succeeded; canceled Cancelled; requires_payment_method with a
// last_payment_error Failed provider_declined (Stripe's codes in Detail).
// Refund status: pending and requires_action Pending, succeeded Succeeded,
// failed and canceled Failed provider_declined.
//
// # Fees
//
// A succeeded payment's Result carries Stripe's fee (Fee) and the date its
// net becomes available (AvailableOn), from the balance transaction of its
// charge: the adapter reads PaymentIntents with
// expand[]=latest_charge.balance_transaction (Checkout Sessions with
// expand[]=payment_intent.latest_charge.balance_transaction), and where an
// answer carries none (a webhook, a search result, a cancel's answer) it
// reads the PaymentIntent so. The balance transaction is in the account's
// settlement currency; when that is not the payment's, the fee is brought
// to the payment's currency at the charge's own rate (fee × charge amount
// ÷ balance transaction amount, rounded half up, in integers). paykit
// never guesses a fee Stripe states, so a succeeded payment whose balance
// transaction cannot be read now (no answer, or none yet) is Unknown with
// its Reference: a later inquiry finds it with its fee.
//
// # Disputes
//
// InquireDispute is GET /v1/disputes/{id}; SubmitDisputeEvidence is
// POST /v1/disputes/{id} with evidence[uncategorized_text] and
// submit=true; AcceptDispute is POST /v1/disputes/{id}/close (Stripe marks
// the dispute lost). When Stripe refuses the update of a dispute for its
// state (submitted or closed already: 400 invalid_request_error), the
// answer is the dispute as it is, so that repeating a call is safe. Every
// other call without a usable answer is an error. Statuses:
// needs_response and warning_needs_response are needs_response;
// under_review and warning_under_review under_review; won, warning_closed
// (an inquiry closed without a chargeback) and prevented won; lost lost;
// any other is an error. Reasons fraudulent, product_not_received,
// product_unacceptable, duplicate and credit_not_processed are paykit's;
// any other is general. The fee is that of the balance transactions
// withdrawing the disputed funds (converted as a payment's), which Stripe
// keeps when the dispute is won; evidence_details.due_by is EvidenceDueBy.
// The disputed payment is the dispute's PaymentIntent (read with
// expand[]=payment_intent, or by id): its metadata[paykit_key] is
// PaymentKey, and PaymentRef is its id, or for a Checkout payment its
// session's (paykit's Reference of it); a charge without a PaymentIntent
// is named by the charge's id alone.
//
// Answers: a timeout after sending is Unknown; a refused or dropped
// connection, 5xx and 429 (rate limited, not executed; Retry-After kept in
// Detail) are Unacknowledged; a 2xx or 4xx whose body is not Stripe's JSON
// (a proxy's page, a foreign 404) is Unknown. On a create, Stripe's 400
// invalid_request_error, 401 and 403 are Refused: Stripe's idempotency
// docs say results are saved only once an endpoint began executing, and
// not when parameters fail validation, so nothing was created under the
// key. An idempotency_error (400 with other parameters, 409 concurrent) is
// Unknown: an attempt may exist. An error naming a payment_intent (402
// card_error on confirm) is that PaymentIntent's result, with its
// Reference. NotFound comes only from Stripe's 404 resource_missing on a
// GET or cancel by id. On a refund create, Stripe's 400/402 refusal (more
// than refundable, say) is Failed provider_declined, nothing having been
// created.
//
// Without a Reference (a create whose answer was lost), an inquiry or
// cancel searches GET /v1/payment_intents/search for
// metadata['paykit_key']. Search is eventually consistent, so when it
// finds nothing the adapter reads the newest 100 PaymentIntents and the
// newest 100 Checkout Sessions (a card attempt has no PaymentIntent until
// the payer pays) from the list APIs, which Stripe's search docs name as
// the read-after-write alternative: found there, that is the attempt;
// found nowhere, Unknown, never NotFound (an attempt Stripe is still
// making is in no list yet). paykit then sends the create again under the
// same Idempotency-Key, which returns the attempt Stripe has or makes the
// one it never received. Refunds have no search API: a Key-only refund
// inquiry reads the newest 100 refunds the same way.
//
// Amounts are int64 minor units end to end (form-encoded integers out,
// JSON integers decoded into int64 in). Stripe caps amounts at eight
// digits (99999999) and has per-currency minimums (MYR 2.00, THB 10.00,
// SGD 0.50); amounts above 2^53 cannot reach it, so the conformance run
// uses amounts within the cap.
//
// # Settlement
//
// SettlementBatches reports the account's automatic payouts (Stripe's
// payout reconciliation guide): a batch is one payout (Reference its
// po_ id, SettledAt its arrival_date, Currency its currency, no
// Merchant), read from GET /v1/payouts, and its lines are the balance
// transactions it paid out, GET /v1/balance_transactions?payout=po_…
// with expand[]=data.source, oldest first, 100 a page (starting_after).
// Stripe lists payouts newest first: after a cursor the adapter reads the
// pages of ending_before=<cursor>, nearest first, and reverses them; from
// the start ("") it reads every page. It takes payouts in the order made
// and stops at the first one still on its way (pending, in_transit, or
// paid with reconciliation_status in_progress), so that a payout arriving
// late is never passed over; a paid payout is a batch once its
// reconciliation_status is completed. Failed and canceled payouts are no
// batches (their funds come back and a later payout pays them out), nor
// are manual payouts (reconciliation_status not_applicable: Stripe cannot
// say what they paid out).
//
// Lines: a charge or payment transaction is a "payment" line whose
// Reference is its PaymentIntent (its Checkout Session's id for a card
// payment, found by GET /v1/checkout/sessions?payment_intent=; Stripe
// copies the PaymentIntent's metadata, paykit_key and the Checkout mark,
// onto its charge); refund and payment_refund are "refund" lines (the
// refund's id), and so are refund_failure, payment_failure_refund and an
// adjustment with reporting_category refund_failure (the refunded amount
// coming back, positive); an adjustment whose source is a dispute is a
// "dispute" line, or "dispute_reversal" with reporting_category
// dispute_reversal. Amount, Fee and Currency are the transaction's
// (amounts and fees in the account's settlement currency: a payment made
// in another currency does not match paykit's record and becomes a
// break). The payout's own transaction is no line; a payout_failure or
// payout_cancel transaction stands for the lines of the payout that
// failed, whose funds this one pays out. Any other transaction (a
// stripe_fee, a reserve, a Connect transfer) is an error naming it: the
// payout cannot be accounted for in paykit's line types. The batch's Net
// is the payout's amount, its Gross and Fee the sums of its
// transactions'. A payout that fails after Stripe reported it paid is not
// taken back. A read without Stripe's usable answer (no answer in time,
// a refused or dropped connection, 5xx, a body that is not Stripe's list,
// an error object) is an error, never an empty report.
//
// # Webhooks
//
// ParseCallback verifies Stripe-Signature as Stripe's "verify manually"
// guide describes: t and one or more v1 signatures, each the hex
// HMAC-SHA256 of "t.payload" under the endpoint secret; any v1 matching
// any of Config.WebhookSecrets passes (secret rotation, during which
// Stripe signs with both); the timestamp must be within Config.Tolerance
// (300 s by default, as Stripe's libraries) of Config.Now, either way.
// It maps payment_intent.succeeded, .payment_failed, .canceled,
// .processing and .requires_action (not those of Checkout's
// PaymentIntents), checkout.session.completed, .expired,
// .async_payment_succeeded and .async_payment_failed, and refund.created,
// refund.updated, refund.failed and charge.refund.updated, by
// metadata.paykit_key. Other events, or objects without the key, give no
// event and no error, so paykit acknowledges them. A succeeded payment's
// event carries no balance transaction: its fee is read as above.
// charge.dispute.created, .updated, .closed, .funds_withdrawn and
// .funds_reinstated are "dispute" events with the dispute as mapped
// above; one whose status the adapter does not know, or whose
// PaymentIntent it cannot read now, is an error, so that Stripe sends it
// again.
//
// # stripe-go, raw requests
//
// Requests go through the official SDK, github.com/stripe/stripe-go/v85:
// its API backend with Config.BaseURL, an HTTP client built on
// Config.HTTPClient, the Idempotency-Key from the attempt key, its pinned
// API version, no retries of its own (MaxNetworkRetries 0: paykit retries
// with the same key), no telemetry and no logging. The adapter uses the
// backend's RawRequest rather than the typed resources, because its rules
// hinge on the raw answer: the status, whether the body is Stripe's JSON
// at all (a proxy's 404 or 502 must not read as Stripe's word), a timeout
// versus a refused connection. The SDK turns an error body that is not
// JSON into an untyped error, so a small transport under the SDK records
// each answer's status and headers (Retry-After, Request-Id) for the
// classification.
//
// # Availability
//
// New refuses a method the account's country cannot accept, after
// Stripe's payment method pages ("Business locations"): FPX: MY. GrabPay:
// MY, SG. PromptPay: TH. WeChat Pay: AT, AU, BE, BG, CA, CH, CY, CZ, DE,
// DK, EE, ES, FI, FR, GB, GR, HK, HU, IE, IT, JP, LT, LU, LV, MT, NL, NO,
// PL, PT, RO, SE, SG, SI, SK, US. Alipay: the same European and other
// locations plus MY and NZ (without PL). Cards: every country.
//
// # Sources
//
// Followed: https://docs.stripe.com/api/idempotent_requests and
// https://docs.stripe.com/idempotency (saved results, validation
// failures, parameter comparison); https://stripe.com/docs/api/payment_intents/search
// and https://stripe.com/docs/search (query language, freshness, list
// APIs for read-after-write); https://docs.stripe.com/api/refunds
// (refund events); https://docs.stripe.com/changelog/acacia/2024-10-28/refund-webhook-update;
// https://docs.stripe.com/api/disputes (the Dispute object: statuses,
// reasons, balance_transactions, evidence_details.due_by; update with
// submit; close) and Stripe's dispute testing conventions (evidence text
// winning_evidence and losing_evidence); https://docs.stripe.com/api/balance_transactions
// (fee, available_on, exchange_rate; the list's payout filter, "for
// automatic Stripe payouts only"); https://docs.stripe.com/payouts/reconciliation,
// https://docs.stripe.com/api/payouts (status, automatic,
// reconciliation_status, arrival_date), https://docs.stripe.com/reports/reporting-categories
// and https://docs.stripe.com/reports/balance-transaction-types (types
// and reporting categories); Stripe support's "How metadata works with
// related objects" (a PaymentIntent's metadata copied onto its charge);
// https://docs.stripe.com/expand;
// https://docs.stripe.com/payments/promptpay, /payments/grabpay,
// /payments/alipay/accept-a-payment?payment-ui=checkout and
// /payments/wechat-pay/accept-a-payment?payment-ui=checkout (business
// locations, currencies); Stripe's webhook signature verification guide
// (https://stripe.com/docs/webhooks/signatures#verify-manually); the FPX
// bank enum of the PaymentMethod object.
//
// Not verified offline: live Stripe. Request shapes are checked against
// stripe-mock v0.203.0 (Stripe's OpenAPI spec), which is stateless, so
// state transitions, error bodies and next_action contents come from the
// docs, through provider/stripe/stripefake. The availability lists follow
// the docs pages as read and change over time; the Alipay list is the
// least certain (the Checkout page lists myr and sgd among its currencies).
package stripe
