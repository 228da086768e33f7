// Package opn is paykit's adapter for Opn Payments (formerly Omise). It
// implements paykit.Provider (CapPayments, CapCancel), paykit.RefundProvider
// (CapRefunds), paykit.PayoutProvider (CapPayouts),
// paykit.DisputeProvider (CapDisputes) and paykit.SettlementReporter
// (CapSettlement) over Opn's REST API
// (https://api.omise.co, HTTP Basic with the secret key, form-encoded
// requests, JSON answers). Package opnfake is a stateful fake of the same
// endpoints for tests.
//
// # Payments
//
// CreatePayment creates the source and its charge in one server-side
// request, POST /charges with amount, currency, source[type] (+ the
// source's fields), return_uri and metadata[paykit_key]; Opn's method
// guides allow this ("create and charge the source in a single API
// request using your secret key"). Methods (source type, country,
// currency, next action):
//
//	PROMPTPAY   promptpay    TH THB  display_qr_code
//	TRUEMONEY   truemoney    TH THB  redirect_to_url (source[phone_number] from customer "phone")
//	ALIPAY      alipay       TH THB  redirect_to_url
//	WECHAT_PAY  wechat_pay   TH THB  display_qr_code
//	FPX         fpx          MY MYR  redirect_to_url (source[bank] from the route's bank, source[email]); NoRefunds
//	DUITNOW_QR  duitnow_qr   MY MYR  display_qr_code
//	TNG         touch_n_go   MY MYR  redirect_to_url
//
// Route returns these as paykit.PaymentRoute templates (FPX with
// FPXBanks: canonical codes mapped to Opn's source[bank] codes); Methods
// lists them. Charge status maps to outcomes: pending with a scannable
// code is RequiresAction display_qr_code, pending with authorize_uri is
// RequiresAction redirect_to_url, successful is Succeeded, failed is
// Failed provider_declined (failure_code and failure_message in Detail),
// expired and reversed are Cancelled. CancelPayment is
// POST /charges/{id}/expire. InquirePayment is GET /charges/{id} with a
// Reference, else GET /search?scope=charge&query=<Key> filtered on
// metadata.paykit_key.
//
// QR codes: Opn's charge JSON carries no raw QR payload, only
// source.scannable_code.image.download_uri (a document, qrcode.svg in the
// documented examples). The adapter downloads it (only from the API's own
// host, as the request carries the secret key) and decodes it with
// github.com/makiuchi-d/gozxing: PNG directly, SVG by rasterising its rect
// elements. If the image cannot be read the charge is answered Pending
// (never failed) and a later inquiry tries again.
//
// # Fees
//
// A successful charge's Result carries Opn's fee: the charge's fee plus
// its fee_vat (both in minor units; Opn's documented charge example has
// net = amount − fee − fee_vat), and AvailableOn, the transferable_at of
// the charge's transaction (GET /transactions/{id}; the Transaction API
// documents transferable_at as when the amount becomes part of the
// available balance). paykit never guesses a fee Opn states, so a
// successful charge stating no fee is Unknown; a transaction that cannot
// be read now leaves AvailableOn zero, with the reason in Detail.
//
// # Disputes
//
// InquireDispute is GET /disputes/{id}; SubmitDisputeEvidence sends the
// text as the dispute's message (PATCH /disputes/{id}), Opn's way of
// taking the merchant's response, which moves the dispute from open to
// pending; AcceptDispute is PATCH /disputes/{id}/accept (the dispute is
// lost). When Opn refuses either for the dispute's state (400 or 422: it
// is no longer open), the answer is the dispute as it is, so that
// repeating a call is safe; every other call without a usable answer is
// an error. Statuses: open is needs_response, pending under_review, won
// won, lost lost, and closed (won or lost, unsaid) lost, as the funds have
// not come back; any other is an error. reason_code maps by the words it
// contains (fraud, unauthorized, unrecognized: fraudulent; not_received,
// not_provided: product_not_received; not_as_described, defective,
// quality: product_unacceptable; duplicate, paid_by_other_means:
// duplicate; credit_not_processed, cancel: credit_not_processed); any
// other is general. The disputed payment is the dispute's charge
// (PaymentRef), read by id when not expanded for its metadata paykit_key
// (PaymentKey). Opn's dispute object states no fee and no evidence
// deadline: Fee is 0 and EvidenceDueBy zero.
//
// # Refunds
//
// POST /charges/{id}/refunds with amount and metadata[paykit_key] (the
// charge found by search when paykit has no Reference); a 400 (amount above
// what is refundable) is Failed provider_declined. Opn retrieves refunds
// under their charge, so a refund's Reference is "chrg_…/rfnd_…"
// (GET /charges/{charge}/refunds/{id}). Refund status closed is Succeeded,
// pending Pending, failed Failed.
//
// # Payouts
//
// CreatePayout creates a recipient (POST /recipients: individual,
// bank_account[brand|number|name], metadata paykit_key and paykit_amount)
// and a transfer to it (POST /transfers: amount, recipient,
// metadata[paykit_key]). ThaiPayoutBanks maps paykit's canonical Thai bank
// codes to Opn's bank_account brand codes; CLICX, EXIM and SME have no Opn
// code we could confirm and PromptPay destinations are not offered for
// transfers, so they are left out. Transfer state: deleted is Cancelled,
// failed (or a failure_code) is Failed, account_invalid when the code names
// the account or recipient, else provider_declined; paid is Succeeded;
// otherwise Pending. CancelPayout is DELETE /transfers/{id} while the
// transfer is not sent. A payout is two requests: when the transfer's
// request never went out (the recipient's answer was lost), an inquiry by
// Key finds the recipient and makes the transfer under the same
// Idempotency-Key, from the amount in its metadata; a cancel answers
// Cancelled (no transfer, no money moved).
//
// # Settlement
//
// Opn pays out of the account's balance (transfers) without naming the
// transactions a transfer pays out, so SettlementBatches does not report
// transfers: a batch is one period (Config.SettlementPeriod, a UTC day by
// default) of the account's transactions (the Transaction API) becoming
// transferable, in one currency. A transaction belongs to the period
// closing at the first boundary (a multiple of the period since the zero
// time: midnight UTC for a day) at or after its transferable_at (its
// created_at, if later or if none is stated: funds are transferable no
// earlier than they arrive); the batch's Reference is "opn_<the close, RFC 3339>_<currency>",
// its SettledAt the close, and it is reported Config.SettlementDelay (an
// hour by default) after it, so that a transaction Opn records late is in
// it. The adapter reads GET /transactions (order chronological, 100 a
// page by offset; after a cursor, from Config.SettlementHold before its
// close, default 60 days: a transaction made longer before its
// transferable_at is missed) and stops once the periods asked for are
// complete: a transaction made at t is transferable no earlier, so every
// period closing before t has all of its.
//
// Lines: a charge's credit is a "payment" line for the charge's amount
// with its fee plus fee_vat (the Result's Fee), read by GET /charges/{id};
// a refund's debit is a "refund" line of minus its amount, named
// "chrg_…/rfnd_…" as the adapter's refunds are (the refund found through
// the Search API, scope refund, by its id); a dispute's debit is a
// "dispute" line and its credit (a won dispute) a "dispute_reversal" line,
// with no fee (Opn states none). Transfers and receipts (Opn's invoices)
// are no lines. Any other transaction (a charge's debit, a refund's
// credit, an origin the adapter does not know) or a charge in another
// currency than its transaction is an error naming it: the period cannot
// be accounted for. The batch's Net is what its transactions moved (Opn
// states each charge's credit net of its fee), its Gross and Fee the sums
// of its lines': a charge whose amount less its fees is not its credit
// makes a batch whose lines disagree with its net, which paykit refuses. A
// read without Opn's usable answer is an error, never an empty report.
//
// # Idempotency and uncertain answers
//
// Every create sends Idempotency-Key (paykit-charge-<Key>,
// paykit-refund-<Key>, paykit-recipient-<Key>, paykit-transfer-<Key>).
// We found this header described for Omise only on a third-party copy of
// the API reference (michael-doc-testing.org/api-reference/idempotency),
// not on docs.opn.ooo, so creates also search first (the Search API,
// scope charge, refund or transfer, query = Key, matching
// metadata.paykit_key exactly) and return an object already made under
// the Key. The search gets half the call's time; if it is inconclusive the
// create goes ahead under its Idempotency-Key. An inquiry or cancel by Key
// alone whose search finds nothing is answered Unknown, not NotFound (the
// search index may lag behind Opn's writes, so it is not Opn's word);
// paykit recovers such an attempt by sending its create again under the
// same Key, which searches first and carries the same Idempotency-Key.
//
// Transport: a timeout after sending is Unknown; refused or dropped
// connections, 5xx and 429 (Retry-After kept in Detail) are
// Unacknowledged; a body that is not Opn's JSON (any status) is Unknown;
// NotFound only for Opn's own error object with code not_found. On a
// create, Opn's 400/401/403 error objects (validation, authentication) and
// not_found are Refused: nothing was created. The adapter never retries,
// and clears Request.GetBody so that net/http never replays a request
// carrying Idempotency-Key.
//
// # Webhooks
//
// ParseCallback verifies Omise-Signature (hex HMAC-SHA256 of
// "<Omise-Signature-Timestamp>.<raw body>" keyed with the base64-decoded
// webhook secret; during a secret rotation the header carries several
// comma-separated signatures, any one of which may verify against any of
// Config.WebhookSecrets) and the timestamp (unix seconds within
// Config.Tolerance of Config.Now, default 5 minutes). The event object
// ({"object":"event","id":"evnt_…","key":"charge.complete","data":{…}})
// becomes one CallbackEvent: data.object charge → "payment", refund →
// "refund", transfer → "payout", Key from data.metadata.paykit_key;
// dispute (events dispute.create, dispute.update, dispute.close) →
// "dispute", the dispute mapped as above (an error when it cannot be
// mapped now, so that Opn sends it again). Events about other objects, or
// without paykit_key, give none.
//
// # Sources followed
//
// Opn documentation pages looked up (through a search index of stored
// copies, not live): Charges and Source API (docs.opn.ooo/sources-api,
// omise.co/source-api: source types, flow, scannable_code, bank and email
// for fpx); the PromptPay, TrueMoney and TrueMoney QR guides
// (docs.opn.ooo/promptpay, omise.co/truemoney, docs.opn.ooo/truemoney-qr:
// single-request source+charge with the secret key, offline flow);
// Search API and Search Query and Filters (omise.co/search-query-and-filters,
// docs.opn.ooo/th/search-api: scopes, query, order); Webhooks
// (docs.omise.co/api-webhooks: event objects, signature verification
// recommended); the Omise-Signature scheme as described on
// tinadiet-docs.pages.dev/documentation/payments/webhook-signature and
// michael-doc-testing.org/api-reference/webhooks (third-party write-ups
// of the documented scheme: the official page's signature section was not
// in the index); recipients' bank brand codes from
// michael-doc-testing.org/api-reference/recipients and memory of
// docs.opn.ooo/bank-codes. A stored charge.complete webhook body showed
// the scannable_code document shape (qrcode.svg, download_uri). Fees and
// disputes: the Charge, Transaction and Dispute API pages
// (docs.opn.ooo/charges-api, docs.omise.co/transactions-api,
// docs.opn.ooo/disputes-api: fee, fee_vat, net, transaction_fees;
// transferable_at; dispute statuses open, pending, won, lost, update with
// message, the test-mode POST /charges/{id}/disputes), the webhook event
// list (omise.co/api-webhooks: dispute.create, dispute.update,
// dispute.close), Opn's SDKs for PATCH /disputes/{id}/accept (the
// omise-php and omise-ruby "accept" methods, status lost), and a
// third-party copy of the reference (michael-doc-testing.org) for a
// message moving a dispute from open to pending and 422 on a dispute that
// is not open. Settlement: the Transaction API (docs.omise.co/transactions-api:
// direction, key, origin, transferable_at; the list's from, to, offset,
// limit and order), the Transfer and Refund APIs (docs.omise.co/transfers-api,
// docs.omise.co/refunds-api), and Opn's help page on calculating a
// transfer's amount (omise.co/how-to-reconcile-transfer-request-amount),
// which reconciles a transfer by date ranges of charges and balance
// movements rather than by a list the transfer names.
//
// # Own client
//
// Opn's Go SDK (github.com/omise/omise-go) is not used: the Go module
// proxy paykit builds with does not serve it (403, "This module version is
// not available", 2026-11-24), and paykit needs what its documentation
// does not show it offering: the base URL and HTTP client set per adapter,
// an Idempotency-Key header on creates, no retries, and the raw status and
// body of every answer to classify it. A small client does that in one
// place (call in opn.go).
//
// # Not verified offline
//
// Against the live API: the reason_code values Opn sends (none are listed
// in the pages read); the transactions a refund, a dispute and a
// transfer make (their direction, amount and transferable_at), and
// whether the Search API finds a refund by its id; whether a dispute's message alone moves it to
// pending; whether Opn charges a dispute fee it states anywhere; the
// Idempotency-Key header's support; whether the
// Search API is immediately consistent; the exact refund status values
// (closed/pending/failed assumed) and transfer failure codes; the bank
// brand codes (ttb is sent as "tmb", Opn's historical code); whether
// alipay (rather than alipay_cn/alipay_hk) is the right TH source for
// ALIPAY; whether Opn's QR SVG draws modules with rect elements (a
// path-drawn SVG would stay Pending without its QR data); per-method
// amount limits (the adapter passes any int64; the tests keep within
// PromptPay's).
package opn
