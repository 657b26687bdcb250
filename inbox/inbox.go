package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reliar/reliar"
)

// ErrAlreadyProcessed is returned by Process when the consumer already
// processed the message: the delivery is a duplicate and fn did not run.
// It is not a failure; acknowledge the delivery.
var ErrAlreadyProcessed = errors.New("inbox: message already processed by this consumer")

// DefaultRetention is how long processed-message records are kept by
// default.
const DefaultRetention = 14 * 24 * time.Hour

// Marker records processed messages inside the consumer's transaction, of
// type Tx.
type Marker[Tx any] interface {
	// MarkProcessed records (consumer, id) in tx. It returns true when
	// the record is new, and false when the consumer already processed the
	// message in a committed transaction. When another transaction holds
	// an uncommitted record of the same message, it waits for that
	// transaction to end.
	MarkProcessed(ctx context.Context, tx Tx, consumer string, id reliar.MessageID) (bool, error)
	// PurgeProcessed deletes at most limit records older than retention,
	// and returns how many it deleted.
	PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error)
}

// Process runs fn in tx unless consumer already processed the message id:
// it records (consumer, id) first, then runs fn, so that the record and
// fn's effects commit together. It returns ErrAlreadyProcessed, without
// running fn, for a duplicate; fn's error as it is; and nil when fn ran.
// The caller commits tx on nil and on ErrAlreadyProcessed, and rolls it
// back on any other error — which also removes the record, so the message
// is processed again on redelivery.
func Process[Tx any](ctx context.Context, m Marker[Tx], tx Tx, consumer string, id reliar.MessageID, fn func(ctx context.Context) error) error {
	if err := ValidateConsumer(consumer); err != nil {
		return err
	}
	if id == [16]byte{} {
		return errors.New("inbox: message id is the nil UUID")
	}
	first, err := m.MarkProcessed(ctx, tx, consumer, id)
	if err != nil {
		return fmt.Errorf("inbox: record %s for %q: %w", id, consumer, err)
	}
	if !first {
		return ErrAlreadyProcessed
	}
	return fn(ctx)
}

// ValidateConsumer checks a consumer name: 1 to 200 bytes of printable,
// valid UTF-8 text (every store can keep it, and compares it byte for
// byte).
func ValidateConsumer(consumer string) error {
	if consumer == "" || len(consumer) > 200 || !utf8.ValidString(consumer) || strings.ContainsFunc(consumer, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("inbox: invalid consumer name %q: want 1 to 200 bytes of printable UTF-8", consumer)
	}
	return nil
}

// Header names that carry a message id, in the order MessageIDFromHeaders
// tries them: the CloudEvents id every Reliar publisher sets (ce-id on HTTP,
// NATS and Redis, ce_id on Kafka, cloudEvents:id on AMQP), JetStream's dedup
// id, the webhook id, AMQP's message-id property when copied into headers.
var idHeaders = []string{reliar.HeaderID, "ce_id", "cloudEvents:id", "Nats-Msg-Id", "webhook-id", "message-id", "message_id"}

// MessageIDFromHeaders reads the message id back from a delivery's headers,
// as every Reliar publisher writes it. Header names match case-insensitively.
func MessageIDFromHeaders(headers map[string]string) (reliar.MessageID, error) {
	lower := make(map[string]string, len(headers))
	for k, v := range headers {
		lower[strings.ToLower(k)] = v
	}
	for _, name := range idHeaders {
		if v, ok := lower[strings.ToLower(name)]; ok && v != "" {
			id, err := reliar.ParseMessageID(v)
			if err == nil && id == (reliar.MessageID{}) {
				err = fmt.Errorf("inbox: header %s is the nil UUID", name)
			}
			return id, err
		}
	}
	return reliar.MessageID{}, errors.New("inbox: no message id header (ce-id, ce_id, cloudEvents:id, Nats-Msg-Id, webhook-id, message-id)")
}
