package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/reliar/reliar/store/pgstore"
)

// rowSecurer is a store that reads its table's row-level security
// (pgstore).
type rowSecurer interface {
	RowSecurity(ctx context.Context) (pgstore.RowSecurity, error)
}

// RowSecurityLine warns, below the stats, that row-level security may hide
// rows from the store's role, so that the counts leave them out; "" when it
// does not, or the store cannot tell.
func RowSecurityLine(ctx context.Context, store any) (string, error) {
	s, can := store.(rowSecurer)
	if !can {
		return "", nil
	}
	r, err := s.RowSecurity(ctx)
	if err != nil {
		return "", fmt.Errorf("read row-level security: %w", err)
	}
	if !r.MayHideRows() {
		return "", nil
	}
	policies := "no policy is for it, so it sees no row"
	if applied := r.AppliedPolicies(); len(applied) > 0 {
		policies = "policies " + strings.Join(applied, ", ")
	}
	return fmt.Sprintf("row-level security may hide rows from role %s (%s): the counts above leave them out, and no dispatcher running as it publishes them; reliar doctor explains", r.Role, policies), nil
}
