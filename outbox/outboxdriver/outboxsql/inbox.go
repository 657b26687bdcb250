package outboxsql

import (
	"errors"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

// errNilMessageID is CheckMark's error for the nil UUID.
var errNilMessageID = errors.New("message id is the nil UUID")

// CheckMark refuses what package inbox's Process refuses, for callers that
// use a store's Marker directly: a consumer name that is not valid and the
// nil message id. The store wraps the error as an invalid request.
func CheckMark(consumer string, id reliar.MessageID) error {
	if err := inbox.ValidateConsumer(consumer); err != nil {
		return err
	}
	if id == (reliar.MessageID{}) {
		return errNilMessageID
	}
	return nil
}
