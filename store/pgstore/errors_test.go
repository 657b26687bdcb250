package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/reliar/reliar"
)

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "m"} }
	tests := []struct {
		name      string
		err       error
		permanent bool
	}{
		{"undefined table", pg("42P01"), true},
		{"undefined column", pg("42703"), true},
		{"undefined function", pg("42883"), true},
		{"syntax error", pg("42601"), true},
		{"insufficient privilege", pg("42501"), true},
		{"invalid schema name", pg("3F000"), true},
		{"invalid catalog name", pg("3D000"), true},
		{"invalid password", pg("28P01"), true},
		{"invalid authorization", pg("28000"), true},
		{"feature not supported", pg("0A000"), true},
		{"connection failure", pg("08006"), false},
		{"connection does not exist", pg("08003"), false},
		{"serialization failure", pg("40001"), false},
		{"deadlock", pg("40P01"), false},
		{"lock not available", pg("55P03"), false},
		{"statement timeout", pg("57014"), false},
		{"admin shutdown", pg("57P01"), false},
		{"crash shutdown", pg("57P02"), false},
		{"cannot connect now", pg("57P03"), false},
		{"too many connections", pg("53300"), false},
		{"disk full", pg("53100"), false},
		{"context deadline", context.DeadlineExceeded, false},
		{"context canceled", context.Canceled, false},
		{"connection lost", io.ErrUnexpectedEOF, false},
		{"wrapped undefined table", fmt.Errorf("outer: %w", pg("42P01")), true},
		{"already permanent", reliar.Permanent(errors.New("x")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wrapErr("op", tt.err)
			if got := reliar.IsPermanent(err); got != tt.permanent {
				t.Fatalf("IsPermanent(wrapErr(%v)) = %v, want %v", tt.err, got, tt.permanent)
			}
			if !errors.Is(err, tt.err) {
				t.Error("the original error is not reachable with errors.Is")
			}
			var pgErr *pgconn.PgError
			if errors.As(tt.err, &pgErr) && !errors.As(err, &pgErr) {
				t.Error("the *pgconn.PgError is not reachable with errors.As")
			}
		})
	}
	if wrapErr("op", nil) != nil {
		t.Error("wrapErr(nil) != nil")
	}
}

// A real undefined table (the schema dropped under a running store) is a
// permanent error with the PgError reachable.
func TestMissingTableIsPermanent(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	dropSchema(t, s.Schema())
	_, err := s.Stats(t.Context())
	var pgErr *pgconn.PgError
	if !reliar.IsPermanent(err) || !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Fatalf("Stats on a dropped table = %v, want a permanent 42P01", err)
	}
}
