// Package webhooks holds the outbound mechanics of merchant webhooks, with no
// storage and no knowledge of events: signing a payload the Standard Webhooks
// way (https://www.standardwebhooks.com), checking an endpoint URL when a
// merchant registers it, an HTTP client that will only connect to allowed
// addresses, one delivery attempt, and the retry schedule.
//
// The root package's webhook delivery job uses it roughly like this:
//
//	h, err := webhooks.Headers(secrets, msgID, time.Now(), body) // msgID stays the same across retries
//	a := webhooks.Deliver(ctx, client, endpointURL, h, body)     // client from NewClient(live), shared
//	switch {
//	case a.Succeeded(): // done
//	case a.Gone():      // disable the endpoint
//	default:
//		if d, ok := webhooks.NextDelay(failedAttempts, a.RetryAfter, nil); ok {
//			// schedule the next attempt in d
//		} // else give up
//	}
//
// and the operator API calls [ValidateURL] before storing an endpoint and
// [NewSecret] to create its signing secret.
//
// The delivery rules it implements (the retry schedule, Retry-After, 410
// disabling an endpoint, no redirects) are the ones the README's "Events
// and webhooks" section gives merchants.
package webhooks
