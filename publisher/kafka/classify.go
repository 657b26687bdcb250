package kafka

import (
	"errors"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kerr"
)

// permanentErrors are the Kafka errors that fail a record the same way
// however often it is retried. UNKNOWN_TOPIC_OR_PARTITION is retriable in
// Kafka's own table, but franz-go reports it only after its
// UnknownTopicRetries metadata refreshes all said the topic is missing.
var permanentErrors = []*kerr.Error{
	kerr.UnknownTopicOrPartition,
	kerr.UnknownTopicID,
	kerr.TopicAuthorizationFailed,
	kerr.InvalidTopicException,
	kerr.MessageTooLarge,
	kerr.RecordListTooLarge,
	kerr.InvalidRecord,
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
