// Package webhook publishes outbox messages as HTTP POST requests signed the
// Standard Webhooks way (https://www.standardwebhooks.com).
//
// Each message is one request: the payload is the body, the envelope travels
// as CloudEvents binary-mode headers (ce-id, ce-type, ce-source, …, with
// Content-Type from the envelope), and three Standard Webhooks headers sign
// it: webhook-id (the message id), webhook-timestamp (unix seconds) and
// webhook-signature, a space-separated list of "v1,<base64 HMAC-SHA256>"
// over "<id>.<timestamp>.<payload>", one entry per configured secret so that
// secrets can be rotated without downtime. Receivers written in Go check a
// request with [Verify].
//
// # Outcomes
//
// A 2xx answer is success. 408, 429, 5xx answers and network errors are
// transient: the dispatcher retries them. Any other 4xx answer is permanent:
// the message goes dead at once. Redirects are never followed, because a
// signed message must not be forwarded to a host nobody configured; a 3xx
// answer is a permanent failure (fix the URL). An optional host allow-list
// refuses, before anything is sent, any request to a host not on it
// (permanent). The answer's body is drained up to a bound and never logged;
// a short prefix of it goes into the error for the operator.
//
// # Duplicates
//
// Delivery is at-least-once. Besides the dispatcher's other duplicate
// windows, a webhook has an ambiguous outcome (duplicate window 4): the
// receiver got and processed the request, but its answer was lost (the
// connection dropped, the timeout fired first), so the message is retried
// and arrives again. Receivers deduplicate by webhook-id, which is the
// message id and stays the same on every retry.
package webhook
