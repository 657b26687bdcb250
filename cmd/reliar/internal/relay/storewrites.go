package relay

import (
	"context"

	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
)

// probeStoreWrites is the store half of the readiness rule (RELIABILITY.md,
// "Readiness"): a relay is not ready while its store cannot take claims and
// outcome writes, here a read-only server (a standby in recovery, or
// default_transaction_read_only) or a role without the privileges. Stores
// that cannot tell (storeurl.WriteChecker) pass.
func probeStoreWrites(ctx context.Context, b storeurl.Backend) error {
	wc, ok := b.(storeurl.WriteChecker)
	if !ok {
		return nil
	}
	return wc.CheckWritable(ctx)
}
