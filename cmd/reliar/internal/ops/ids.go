package ops

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// ErrBadID is matched (with errors.Is) by the error of ParseIDs.
var ErrBadID = errors.New("bad message id")

// ParseIDs parses message ids (UUIDs), dropping repeats and keeping the
// order of first appearance. The nil UUID is refused: no message has it.
func ParseIDs(args []string) ([]reliar.MessageID, error) {
	seen := make(map[reliar.MessageID]bool, len(args))
	ids := make([]reliar.MessageID, 0, len(args))
	for _, a := range args {
		id, err := reliar.ParseMessageID(a)
		if err != nil {
			return nil, fmt.Errorf("%w %q: want a UUID such as 0190a4c2-7b1e-7cde-8f00-1234567890ab", ErrBadID, a)
		}
		if id == uuid.Nil {
			return nil, fmt.Errorf("%w %q: the nil UUID names no message", ErrBadID, a)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}
