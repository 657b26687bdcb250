package kafkapub

import (
	"errors"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kerr"
)

// permanentErrors are the Kafka errors that only the record itself causes,
// so that it fails the same way however often it is retried. A missing or
// forbidden topic, refused credentials and a record batch too large are
// not among them: every message for the topic shares the first three and
// an operator can fix them, and the publisher checks each record against
// the topic's max.message.bytes before sending, so a batch the broker finds
// too large held records that each fit alone (see the package
// documentation).
var permanentErrors = []*kerr.Error{
	kerr.InvalidTopicException,
	kerr.InvalidRecord,
	kerr.CorruptMessage,
}

// classify marks err permanent when it carries one of permanentErrors and
// leaves it transient otherwise.
func classify(err error) error {
	if err == nil || reliar.IsPermanent(err) {
		return err
	}
	for _, p := range permanentErrors {
		if errors.Is(err, p) {
			return reliar.Permanent(err)
		}
	}
	return err
}
