package amqppub

import (
	"time"

	"github.com/reliar/reliar"
)

var _ reliar.DedupWindower = (*Publisher)(nil)

// DedupWindow returns zero: the broker does not drop a second message with
// the same message id, so every republication reaches consumers, who
// deduplicate (see package inbox).
func (p *Publisher) DedupWindow() time.Duration { return 0 }
