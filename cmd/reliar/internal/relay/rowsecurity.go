package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// ErrRowSecurity is matched (with errors.Is) by the error of a relay asked
// for per-key ordering over an outbox table whose row-level security may
// hide rows from the relay's role.
var ErrRowSecurity = errors.New("row-level security may hide outbox rows from the relay's role")

// checkRowSecurity reads the row-level security of the store's table at
// start-up. Policies that may hide rows from the relay's role refuse
// per-key ordering (a hidden older row of a key would let its newer rows
// go first) and are a warning otherwise (hidden rows are never published).
func checkRowSecurity(ctx context.Context, cfg Config, store outbox.Store, log *slog.Logger) error {
	in, ok := store.(tableInspector)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	r, err := in.RowSecurity(ctx)
	if err != nil {
		// The catalogs are readable by every role; a failure here is the
		// database's, and the claims will meet it too.
		log.Warn("relay could not read the outbox table's row-level security", "error", err)
		return nil
	}
	if !r.MayHideRows() {
		if r.Active {
			log.Info("row-level security applies to the relay's role; its policies let every row through",
				"role", r.Role, "policies", r.AppliedPolicies())
		}
		return nil
	}
	what := rowSecurityText(r)
	if cfg.Settings.Ordering == outbox.PerKey {
		return fmt.Errorf("%w: %s; under per-key ordering a hidden older row of a key would let its newer rows publish first, so per-key ordering is refused: exempt the role (ALTER ROLE %s BYPASSRLS, or CREATE POLICY … TO %s USING (true) WITH CHECK (true)), or run without --ordering per-key",
			ErrRowSecurity, what, r.Role, r.Role)
	}
	log.Warn("row-level security may hide outbox rows from the relay's role: the rows it hides are never published nor counted; exempt the role (BYPASSRLS, or a policy USING (true) for it)",
		"role", r.Role, "policies", r.AppliedPolicies(), "forced", r.Forced)
	return nil
}

// rowSecurityText says which policies hide rows from the role.
func rowSecurityText(r pgstore.RowSecurity) string {
	applied := r.AppliedPolicies()
	if len(applied) == 0 {
		return fmt.Sprintf("row-level security is on for role %s and no policy is for it, so it sees no row", r.Role)
	}
	return fmt.Sprintf("row-level security applies to role %s through the policies %s, which may hide rows from it", r.Role, strings.Join(applied, ", "))
}
