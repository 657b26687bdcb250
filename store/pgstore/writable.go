package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrReadOnly is matched (with errors.Is) by a *ReadOnlyError.
var ErrReadOnly = errors.New("pgstore: the server is read-only")

// ReadOnlyError reports a server on which the store's claims and outcome
// writes cannot run: a standby in recovery, or transactions read-only by
// default (default_transaction_read_only on the server, the database or
// the role).
type ReadOnlyError struct {
	// InRecovery: the server is a standby (pg_is_in_recovery).
	InRecovery bool
}

// Error says why the server is read-only.
func (e *ReadOnlyError) Error() string {
	if e.InRecovery {
		return "pgstore: the server is read-only: it is a standby in recovery (connect to the primary, e.g. target_session_attrs=read-write)"
	}
	return "pgstore: the server is read-only: transactions are read-only by default (default_transaction_read_only)"
}

// Is matches ErrReadOnly.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// ErrMissingPrivileges is matched (with errors.Is) by a
// *MissingPrivilegesError.
var ErrMissingPrivileges = errors.New("pgstore: the role lacks privileges the dispatcher needs")

// MissingPrivilegesError reports the table privileges the connected role
// lacks for claims (SELECT, UPDATE), outcome writes (UPDATE, and DELETE
// with WithDeleteOnComplete) and the maintainer's purge (DELETE).
type MissingPrivilegesError struct {
	Role    string
	Table   string
	Missing []string
}

// Error names the role, the table and the missing privileges.
func (e *MissingPrivilegesError) Error() string {
	return fmt.Sprintf("pgstore: role %q lacks %s on %s", e.Role, strings.Join(e.Missing, ", "), e.Table)
}

// Is matches ErrMissingPrivileges.
func (e *MissingPrivilegesError) Is(target error) bool { return target == ErrMissingPrivileges }

// dispatchPrivileges are the privileges on the outbox table the relay's
// claims, outcome writes and purge need.
var dispatchPrivileges = []string{"SELECT", "UPDATE", "DELETE"}

// CheckWritable reports whether the store can take a dispatcher's claims
// and outcome writes: nil when it can, a *ReadOnlyError on a standby or a
// read-only default, a *MissingPrivilegesError when the connected role
// lacks a privilege, or the error that kept the check from running. It is
// one read-only statement, cheap enough for a readiness probe.
func (s *Store) CheckWritable(ctx context.Context) error {
	b := s.newBatch(adminTx)
	b.Queue(`SELECT pg_catalog.pg_is_in_recovery(),
    pg_catalog.current_setting('default_transaction_read_only')::bool,
    current_user,
    pg_catalog.has_table_privilege($1::regclass, 'SELECT'),
    pg_catalog.has_table_privilege($1::regclass, 'UPDATE'),
    pg_catalog.has_table_privilege($1::regclass, 'DELETE')`, s.n.table)
	var (
		recovery, readOnly bool
		role               string
		have               = make([]bool, len(dispatchPrivileges))
	)
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		return br.QueryRow().Scan(&recovery, &readOnly, &role, &have[0], &have[1], &have[2])
	})
	if err != nil {
		return wrapErr("check writable", err)
	}
	if recovery || readOnly {
		return &ReadOnlyError{InRecovery: recovery}
	}
	var missing []string
	for i, ok := range have {
		if !ok {
			missing = append(missing, dispatchPrivileges[i])
		}
	}
	if len(missing) > 0 {
		return &MissingPrivilegesError{Role: role, Table: s.n.table, Missing: missing}
	}
	return nil
}
