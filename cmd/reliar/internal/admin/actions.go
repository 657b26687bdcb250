package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// maxIDs bounds the ids one request may name; ops.ApplyIDs sends them in
// batches of ops.IDBatch.
const maxIDs = 10 * ops.IDBatch

// Scopes of an action, as the audit records name them.
const (
	scopeOne         = "one"
	scopeSelection   = "selection"
	scopeAllMatching = "all_matching"
)

// action is one retry or purge to run: named ids, or every dead row that
// the filter's type and tenant match.
type action struct {
	act         ops.Action
	ids         []reliar.MessageID
	allMatching bool
	filter      deadFilter
	scope       string
}

// newAction validates what a request named: ids, or all matching, never
// both nor neither.
func newAction(act ops.Action, rawIDs []string, allMatching bool, f deadFilter) (action, error) {
	switch {
	case allMatching && len(rawIDs) > 0:
		return action{}, fmt.Errorf("%w: name ids or ask for all matching, not both", ErrBadRequest)
	case !allMatching && len(rawIDs) == 0:
		return action{}, fmt.Errorf("%w: select at least one dead letter", ErrBadRequest)
	case len(rawIDs) > maxIDs:
		return action{}, fmt.Errorf("%w: %d ids in one request, more than %d", ErrBadRequest, len(rawIDs), maxIDs)
	}
	a := action{act: act, allMatching: allMatching, filter: f, scope: scopeAllMatching}
	if allMatching {
		return a, nil
	}
	ids, err := ops.ParseIDs(rawIDs)
	if err != nil {
		return action{}, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	a.ids, a.scope = ids, scopeSelection
	if len(ids) == 1 {
		a.scope = scopeOne
	}
	return a, nil
}

// run applies the action in bounded batches, as reliar dead does, and
// writes its audit record. On error the tally says what was done before it.
func (s *Server) run(ctx context.Context, a action, r *http.Request, c caller) (ops.Tally, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ActionTimeout)
	defer cancel()
	var (
		t   ops.Tally
		err error
	)
	if a.allMatching {
		q := a.filter.withOrder(orderOldest).query()
		q.Limit = ops.IDBatch
		t, err = ops.ApplyMatching(ctx, s.cfg.Store, a.act, q, nil)
	} else {
		t, err = ops.ApplyIDs(ctx, s.cfg.Store, a.act, a.ids)
	}
	attrs := []any{
		"action", a.act.String(), "scope", a.scope,
		"asked", t.Asked, "done", t.Done, "batches", t.Batches,
		"auth", c.how(), "remote", r.RemoteAddr,
	}
	if a.allMatching {
		attrs = append(attrs, "type", a.filter.Type, "tenant", a.filter.Tenant)
	}
	if err != nil {
		s.log.Error("admin action failed", append(attrs, "error", err)...)
		return t, err
	}
	s.log.Info("admin action", attrs...)
	return t, nil
}

// actionStatus is the HTTP status of an action's error.
func actionStatus(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// summary tells in words what an action did, for the page's message.
func summary(a action, t ops.Tally) string {
	verb := map[ops.Action]string{ops.Retry: "Retried", ops.Delete: "Purged"}[a.act]
	noun := "dead letters"
	if t.Asked == 1 {
		noun = "dead letter"
	}
	msg := fmt.Sprintf("%s %d of %d %s.", verb, t.Done, t.Asked, noun)
	if t.Done < t.Asked {
		msg += " The others were no longer dead."
	}
	return msg
}
