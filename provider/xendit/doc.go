// Package xendit is paykit's adapter for Xendit. It implements
// paykit.Provider (CapPayments, CapCancel), paykit.RefundProvider
// (CapRefunds), paykit.PayoutProvider (CapPayouts),
// paykit.DisputeProvider (CapDisputes) and paykit.SettlementReporter
// (CapSettlement, with Config.SettlementReports) over Xendit's REST API
// (https://api.xendit.co, HTTP Basic with the secret key as user, JSON):
// the Payments API v3 (payment requests, payments), refunds, the Payouts
// API v2, the Transactions API and the Disputes API. Package xenditfake
// is a stateful fake of the same endpoints for tests.
//
// # Methods
//
// A payment is a payment request (POST /v3/payment_requests, header
// api-version 2024-11-11, type PAY, capture_method AUTOMATIC,
// reference_id = the attempt's Key, metadata paykit_key = Key). Methods
// (paykit method, country and currency, Xendit channel_code, next action):
//
//	FPX            MY MYR  {Bank}_FPX (the route's bank)  redirect_to_url             NoRefunds
//	TNG            MY MYR  TOUCHNGO                       redirect_to_url
//	GRABPAY        MY MYR  GRABPAY                        redirect_to_url
//	WECHAT_PAY     MY MYR  WECHATPAY                      redirect_to_url             full refunds only
//	BANK_TRANSFER  MY MYR  AMBANK_VIRTUAL_ACCOUNT         bank_transfer_instructions  NoRefunds
//	PROMPTPAY      TH THB  QRPROMPTPAY                    display_qr_code             NoRefunds
//	TRUEMONEY      TH THB  TRUEMONEY                      redirect_to_url
//	WECHAT_PAY     TH THB  WECHATPAY                      redirect_to_url             NoRefunds
//
// Route returns these as paykit.PaymentRoute templates (FPX with
// FPXBanks: paykit's canonical bank codes mapped to Xendit's
// {Bank Name}_FPX channel codes: MAYB2U, CIMB, PUBLIC, RHB, HLB, AMBANK,
// BSN, ISLAM, AFFIN, ALLIANCE, AGRO, MUAMALAT, RAKYAT, HSBC, KFH, OCBC, UOB,
// SCH); MethodsIn lists them by country. channel_properties carry the
// ReturnURL as success, failure and cancel return URL for redirects, and
// expires_at for a QR code or virtual account (Xendit documents expiry
// for those); the QR string is dynamic (qr_string_type DYNAMIC); a
// virtual account shows Config.DisplayName as its holder.
//
// Not served: CARD (Xendit's CARDS channel takes the card's number and
// CVN in channel_properties, which paykit never holds; a page of
// Xendit's for the card is its Payment Sessions API, another object model,
// not built here); ALIPAY (no Xendit channel page for Alipay in MY or TH
// was found); DUITNOW_QR (Xendit's DuitNow channel is DUITNOW_PAY, online
// banking, not the QR); BOOST, UNIONPAY, UMOBILE and EMONEI (no Xendit
// channel found). ShopeePay, which Xendit offers in MY, is no paykit
// method.
//
// Payment request status maps to outcomes: REQUIRES_ACTION (and
// ACCEPTING_PAYMENTS) is RequiresAction with its action (a
// PRESENT_TO_CUSTOMER QR_STRING is display_qr_code, a
// VIRTUAL_ACCOUNT_NUMBER bank_transfer_instructions with the channel's
// bank, a REDIRECT_CUSTOMER WEB_URL, else DEEPLINK_URL, a redirect),
// Pending without a usable action; SUCCEEDED is Succeeded (with its fee,
// below); FAILED is Failed provider_declined (failure_code in Detail);
// CANCELED and EXPIRED are Cancelled; AUTHORIZED (manual capture, never
// asked for) and any other status Pending. An answer whose reference_id is
// not the Key is Unknown: it is no word about the attempt. CancelPayment
// is POST /v3/payment_requests/{id}/cancel; a payment request no longer
// waiting (400 INACTIVE_PAYMENT_REQUEST) is answered as it is.
// InquirePayment is GET /v3/payment_requests/{id} with a Reference, else
// GET /v3/payment_requests?reference_id=Key.
//
// # Idempotency
//
// Xendit documents no idempotency key for payment requests, so
// CreatePayment first lists payment requests by reference_id (half the
// call's time) and answers one already made under the Key; it also sends
// the Key as Idempotency-key, which Xendit documents for refunds and
// payouts. A lookup by Key alone that finds nothing is Unknown, never
// NotFound (a list may lag Xendit's writes); paykit recovers such an
// attempt by sending its create again, which looks first. Refunds are
// created the same way (a lookup by reference_id, then POST /refunds with
// the Key as Idempotency-key). Payouts rely on the Payouts API's mandatory
// Idempotency-key, the attempt's Key (also the reference_id); a key
// Xendit already holds with another body (409 DUPLICATE_ERROR) is
// answered with the payout listed under it.
//
// # Fees
//
// A succeeded payment's Result carries Xendit's fee: xendit_fee plus
// value_added_tax of its PAYMENT transaction (GET
// /transactions?reference_id=Key&types=PAYMENT, the transaction whose
// product_data.payment_request_id is the payment request), converted to
// minor units, and AvailableOn, its estimated_settlement_time. paykit
// never guesses a fee Xendit states, so a succeeded payment whose
// transaction is not listed yet, or whose fee is not COMPLETED (or
// NOT_APPLICABLE), is Unknown with its Reference; a later inquiry finds
// it. Withholding taxes (xendit_withholding_tax,
// third_party_withholding_tax) are not part of the fee: they apply in
// Indonesia and the Philippines, where the adapter serves nothing.
//
// # Refunds
//
// POST /refunds with payment_request_id (from the Reference, or listed by
// the payment's Key), reference_id = Key, amount, currency and reason
// REQUESTED_BY_CUSTOMER. Xendit's refusals of the refund itself
// (REFUND_AMOUNT_EXCEEDED, INELIGIBLE_TRANSACTION_STATUS,
// PARTIAL_REFUND_COUNTS_EXCEEDED, INSUFFICIENT_BALANCE, 403
// REFUND_NOT_SUPPORTED and PARTIAL_REFUND_NOT_SUPPORTED) are Failed
// provider_declined; REFUND_IN_PROGRESS and TEMPORARILY_UNAVAILABLE are
// Unacknowledged (not executed: the key may try again). Refund status
// PENDING is Pending, SUCCEEDED Succeeded, FAILED and CANCELLED Failed.
// InquireRefund is GET /refunds/{id}, else GET /refunds?reference_id=Key.
//
// # Payouts
//
// CreatePayout is POST /v2/payouts: reference_id and Idempotency-key =
// Key, channel_code = the route's bank code (PayoutBanks: MY_… and TH_…
// codes per canonical bank; a providers file may override each),
// channel_properties account_number and account_holder_name, amount and
// currency. Status: ACCEPTED, PENDING_COMPLIANCE_ASSESSMENT and
// REQUESTED are Pending; SUCCEEDED is Succeeded; FAILED is Failed
// (failure_code INVALID_DESTINATION account_invalid, any other
// provider_declined) and so is COMPLIANCE_REJECTED; CANCELLED is
// Cancelled; REVERSED, which Xendit documents only for a payout that
// succeeded and whose funds the bank sent back, is Returned. Create
// errors: RECIPIENT_ACCOUNT_NUMBER_ERROR is Failed account_invalid;
// validation errors (API_VALIDATION_ERROR, CHANNEL_CODE_NOT_SUPPORTED_ERROR,
// RECIPIENT_AMOUNT_ERROR, MAXIMUM_TRANSFER_LIMIT_ERROR, …), 401, 403 and
// INSUFFICIENT_BALANCE are Refused (nothing was made). CancelPayout is
// POST /v2/payouts/{id}/cancel while the payout is in flight; a payout
// already sent answers its state.
//
// # Disputes
//
// InquireDispute is GET /v1/disputes/{id}. Status ACTION_REQUIRED is
// needs_response, UNDER_REVIEW under_review, WON won, LOST lost; the
// reason comes from the category's slug by the words it contains (fraud,
// unauthorized: fraudulent; not received: product_not_received; not as
// described, defective: product_unacceptable; duplicate: duplicate;
// refund, cancel: credit_not_processed; else general). Amount is
// amount.initial (the terminal amount goes to Detail), EvidenceDueBy
// due_date; Xendit's dispute states no fee, so Fee is 0. The disputed
// payment is Xendit's payment_id; the adapter reads the payment (GET
// /v3/payments/{id}) for its payment_request_id, the payment's Reference,
// and takes reference_id as PaymentKey. SubmitDisputeEvidence files the
// text as TEXT evidence (POST /v1/disputes/{id}/evidences, multipart,
// under the category's TEXT evidence slug with the largest max_length,
// the text cut to it, Detail saying so) and challenges the dispute (POST
// /v1/disputes/{id}/challenge); AcceptDispute is POST
// /v1/disputes/{id}/accept. Xendit acknowledges both with 202 and
// processes them asynchronously: while the dispute still reads
// ACTION_REQUIRED, the adapter answers the documented result
// (UNDER_REVIEW, LOST). A dispute no longer ACTION_REQUIRED (400
// ILLEGAL_STATE, or read so first) is answered as it is, so a repeated
// call is safe. A call without Xendit's usable answer is an error.
//
// # Settlement
//
// Xendit states per transaction when its funds settle
// (estimated_settlement_time, settlement_status PENDING, EARLY_SETTLED or
// SETTLED) but names no settlement batch, so SettlementBatches cuts
// periods (Config.SettlementPeriod, a UTC day by default) per currency:
// a PAYMENT transaction belongs to the period of its
// estimated_settlement_time, a REFUND or CHARGEBACK debit (money out,
// which has no settlement time) to the period it was made in, a
// CHARGEBACK credit (a won dispute) to its settlement time if stated,
// else when made. A period is reported Config.SettlementDelay (an hour) after
// it closes, and only once every transaction in it is final (SUCCESS and,
// for a payment, settled): a later one holds the period, and every period
// after it, back; a FAILED, VOIDED or REVERSED transaction brings no line.
// Lines: a payment (Reference its payment request, Key its reference_id,
// its amount, fee xendit_fee + value_added_tax), a refund (its refund id,
// minus its amount and its fee), a dispute (the dispute id, minus its
// amount) and a dispute_reversal (plus its amount). The batch's Net is
// what its transactions moved: each payment's net_amount as Xendit states
// it, each debit minus its amount and fee; a payment whose amount less
// its fee is not its net_amount makes a batch paykit refuses. Payouts,
// withdrawals, top-ups, transfers, conversions and reserves bring no
// lines; a transaction of another type is an error naming it (the period
// cannot be accounted for). Reads: GET /transactions with created[lte]
// the reported end and, after a cursor, created[gte] Config.SettlementHold
// (30 days by default) before its period's close, every page (after_id);
// a batch's Reference is "xendit_<close, RFC 3339>_<currency>".
//
// # Webhooks
//
// ParseCallback checks the x-callback-token header against each of
// Config.CallbackTokens (sha256 digests compared in constant time; several
// while one token replaces another). The token proves the sender but not
// the body, so the adapter reads the object a webhook names and answers
// Xendit's state of it: payment.capture, payment.authorization and
// payment.failure read the payment request (and its fee); refund.* the
// refund, payout.* the payout, dispute.* the dispute. A body naming a
// reference_id the object does not have is refused; an object that cannot
// be read now is an error (Xendit retries a webhook for 24 hours). The
// CallbackEvent ID is the event with the object's id (and, for a
// dispute, its status and update time).
//
// # Amounts
//
// Xendit writes amounts in major units with decimals (150.25 MYR); the
// adapter converts them from and to paykit's minor units on their decimal
// text (Decimal, MinorUnits), never through a float, for MYR and THB.
//
// # Transport
//
// A timeout after sending is Unknown; refused or dropped connections,
// 5xx and 429 (Retry-After kept in Detail) are Unacknowledged; a body that
// is not Xendit's JSON (any status) is Unknown; NotFound only for Xendit's
// 404 error object (DATA_NOT_FOUND). The adapter never retries, and clears
// Request.GetBody so that net/http never replays a request carrying an
// Idempotency-key.
//
// # Own client
//
// Xendit's Go SDK (github.com/xendit/xendit-go) is not used: its
// documentation shows the Payment Request API v2 but not the v3 payment
// requests or the Disputes API the adapter uses, and models amounts as
// float32 (Payout.Amount), which loses minor units. A small client (do in
// client.go) gives the raw status and body of every answer, a base URL
// per adapter and no retries.
//
// # Sources followed
//
// Xendit documentation looked up through a search index of stored copies
// (not live), docs.xendit.co: Create, Get and Cancel a payment request,
// Simulate payment, Payment webhook notification, Refund a payment
// request (OpenAPI of the Payments API v3, api-version 2024-11-11); the
// Migrate Payment API v2 to v3 guide (list endpoint, statuses, webhook
// names); the channel pages (Touch 'n Go, GrabPay MY, WeChat Pay MY, FPX
// Online Banking, Ambank Virtual Account, TrueMoney, PromptPay, DuitNow
// Pay) for channel codes, limits and refunds, and the Payments API
// reference's channel table (developers.xendit.co) for WECHATPAY in TH
// without refunds; Create, Get and Cancel payout and the payout webhook
// (docs.xendit.co/apidocs, Payouts API v2, statuses and their lifecycle
// page, test scenarios: account 131313 stays ACCEPTED); List
// Transactions (fee, settlement_status, estimated_settlement_time,
// product_data); Get dispute, Accept, Challenge, Submit evidence via
// multipart, Simulate a dispute and the dispute webhooks; Handling
// webhooks and Webhook behavior (x-callback-token, retries); the
// xendit-go SDK's generated documentation (PayoutApi, RefundApi:
// Idempotency-key, list filters, object fields).
//
// # Not verified offline
//
// Against the live API: whether POST /v3/payment_requests honours an
// Idempotency-key (sent, undocumented); whether GET /v3/payment_requests
// and GET /refunds filter by reference_id (the refund list documents
// payment_request_id; the adapter also filters the answer itself) and
// whether such lists are immediately consistent; PromptPay's channel code
// (the v3 API reference's example says QRPROMPTPAY, the PromptPay channel
// page says PROMPTPAY); whether TOUCHNGO and TRUEMONEY refund (their pages
// as stored did not show it; the adapter allows refunds); the Payouts
// API channel codes for Malaysian and Thai banks (the documented list is
// an embedded table the index did not hold: MY_MAYBANK, MY_CIMB, MY_RHB,
// TH_BBL, TH_KBANK and TH_SCB appear in third-party write-ups, the others
// follow their pattern; override any in the providers file) and the error
// code of a cancel refused for a payout already sent; the payout
// failure codes beyond INVALID_DESTINATION; that a PAYMENT transaction's
// reference_id is the payment request's and that REFUND and CHARGEBACK
// transactions name the refund and dispute ids as product_id; when a
// refund's or dispute's transaction settles (the adapter reckons debits
// when made); the dispute category slugs Xendit sends, whether a
// dispute's TEXT evidence category is always offered, and any dispute fee
// Xendit charges; whether Xendit sends a webhook id header (the adapter
// makes its event ids from the body).
package xendit
