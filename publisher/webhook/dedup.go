package webhook

import (
	"time"

	"github.com/reliar/reliar"
)

var _ reliar.DedupWindower = (*Publisher)(nil)

// DedupWindow returns zero: a receiver sees every republication, with the
// same webhook-id; Standard Webhooks receivers deduplicate by it.
func (p *Publisher) DedupWindow() time.Duration { return 0 }
