package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reliar/reliar/store/pgstore"
)

// CheckWritable names the check that the relay's claims and outcome writes
// can run: not a standby, not read-only by default, the role's privileges.
const CheckWritable = "writable"

// Writable is what the writable check found; the zero value is a server
// that takes the relay's writes.
type Writable struct {
	// ReadOnly: transactions are read-only (a standby, or
	// default_transaction_read_only); InRecovery: the server is a standby.
	ReadOnly, InRecovery bool
	// Role lacks Missing on the outbox table.
	Role    string
	Missing []string
}

// gatherWritable asks the store whether it takes a dispatcher's writes.
func gatherWritable(ctx context.Context, s *pgstore.Store, f *Facts) error {
	err := s.CheckWritable(ctx)
	var ro *pgstore.ReadOnlyError
	var mp *pgstore.MissingPrivilegesError
	switch {
	case err == nil:
	case errors.As(err, &ro):
		f.Writable.ReadOnly, f.Writable.InRecovery = true, ro.InRecovery
	case errors.As(err, &mp):
		f.Writable.Role, f.Writable.Missing = mp.Role, mp.Missing
	default:
		return err
	}
	return nil
}

func checkWritable(f Facts) Check {
	w := f.Writable
	c := Check{Name: CheckWritable, Verdict: OK, Found: "the server takes writes and the role may claim, record outcomes and purge"}
	switch {
	case w.InRecovery:
		c.Verdict = Red
		c.Found = "the server is a standby in recovery: every transaction is read-only"
		c.Why = "the relay's claims and outcome writes fail on a standby: it keeps running and retrying, not ready (/readyz 503), and publishes nothing"
		c.Fix = "point --database-url at the primary; with several hosts in the URL add target_session_attrs=read-write"
	case w.ReadOnly:
		c.Verdict = Red
		c.Found = "transactions are read-only by default (default_transaction_read_only is on for the server, the database or the role)"
		c.Why = "the relay's claims and outcome writes fail: it keeps running and retrying, not ready (/readyz 503), and publishes nothing"
		c.Fix = "ALTER DATABASE ... RESET default_transaction_read_only (or ALTER ROLE ..., or the server setting), or connect to a writable server"
	case len(w.Missing) > 0:
		c.Verdict = Red
		c.Found = fmt.Sprintf("role %q lacks %s on %q.outbox", w.Role, strings.Join(w.Missing, ", "), f.Schema)
		c.Why = "claims need SELECT and UPDATE, outcome writes UPDATE, the maintainer's purge DELETE: without them the relay is not ready (/readyz 503)"
		c.Fix = fmt.Sprintf("GRANT SELECT, UPDATE, DELETE ON %q.outbox TO %q", f.Schema, w.Role)
	}
	return c
}
