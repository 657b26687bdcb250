package kafkapub

import (
	"time"

	"github.com/reliar/reliar"
)

var _ reliar.DedupWindower = (*Publisher)(nil)

// DedupWindow returns zero: the idempotent producer drops retries of one
// produce request within a producer session, but Kafka never drops a second
// message with the same message id, so every republication reaches
// consumers, who deduplicate (see package inbox).
func (p *Publisher) DedupWindow() time.Duration { return 0 }
