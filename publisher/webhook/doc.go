// Package webhook publishes outbox messages as HTTP POST requests signed the
// Standard Webhooks way (https://www.standardwebhooks.com).
//
// Each message is one request, as the CloudEvents HTTP protocol binding in
// binary content mode says: the payload is the body, every attribute a
// "ce-" header (ce-id, ce-type, ce-source, ce-specversion, ce-time, the
// extensions ce-messageversion, ce-correlationid, …), the data content type
// the Content-Type header. Attribute values are percent-encoded as the
// binding requires (space, double quote, percent and every byte outside
// printable ASCII become %XX), so every ce- header is printable ASCII and a
// receiver decodes it with one round of percent-decoding; Content-Type is
// not encoded. The W3C traceparent and tracestate headers and the user
// headers follow; a user header in a CloudEvents namespace, which only a row
// written by plain SQL can carry (Enqueue refuses it), is sent renamed
// ([reliar.RenamedHeader]), since the SDKs would refuse the whole event for
// it. Three Standard Webhooks headers sign the request: webhook-id (the message id), webhook-timestamp (unix seconds) and
// webhook-signature, a space-separated list of "v1,<base64 HMAC-SHA256>"
// over "<id>.<timestamp>.<payload>", one entry per configured secret so that
// secrets can be rotated without downtime. Receivers written in Go check a
// request with [Verify].
//
// # Outcomes
//
// A 2xx answer is success. Errors follow one rule: what only this message
// causes, and no retry fixes, is permanent (the message goes dead at once):
// 400, 413 (the receiver's size limit), 415, 422 and the other 4xx answers,
// an invalid URL or header of the message. What every message shares, and
// an operator fixes, is transient, so that it feeds the dispatcher's
// circuit breaker and dead-letters nothing: 404 and 410 (no receiver
// there), 401 and 403 (credentials refused), 3xx (the endpoint moved:
// redirects are never followed, because a signed message must not be
// forwarded to a host nobody configured), and with them 408, 409, 425, 429,
// 5xx and network errors. An optional host allow-list ([WithAllowedHosts])
// refuses, before anything is sent, any request to a host not on it
// (permanent). The answer's body is drained up to a bound and discarded:
// errors, and so logs and last_error, carry only the status code and its
// reason phrase, since a receiver may echo the request.
//
// # Limits
//
// A receiver's limit on a request body is its own; it answers 413 to a
// larger one, which fails that message permanently. The store's
// MaxPayloadBytes (1 MiB by default) bounds the body; the headers add about
// 2 KiB more.
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
