package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// apiLimit is the default page size of /api/dead, the store's own default.
const apiLimit = 100

// drainSpan is the span the current net drain is averaged over.
const drainSpan = 5 * time.Minute

// StatsDocument is the answer of GET /api/stats: the keys of reliar stats
// --json (tenants among them: at most Config.Tenants, null when the store
// cannot list tenants or they could not be read), the net drain, and the
// sampled history the chart draws.
type StatsDocument struct {
	ops.StatsDocument
	// DrainPerMinute is the net drain (rows per minute the pending backlog
	// shrank) over the last five minutes of samples; null before two.
	DrainPerMinute *float64 `json:"drain_per_minute"`
	// PublishedPerMinute is the publish rate (rows published per minute)
	// over the last minute of samples; null before two, or when the store
	// does not count its published rows.
	PublishedPerMinute *float64 `json:"published_per_minute"`
	// History holds the samples of the last hour, oldest first.
	History []HistoryPoint `json:"history"`
	// tenantsErr is why the tenants could not be read; the gauges were,
	// and Tenants is null.
	tenantsErr error
}

// HistoryPoint is one sample of StatsDocument's history.
type HistoryPoint struct {
	At      time.Time `json:"at"`
	Pending int64     `json:"pending"`
	Due     int64     `json:"due"`
	Dead    int64     `json:"dead"`
	// Published is the number of rows published since the previous
	// sample; absent when the store did not count them.
	Published *int64 `json:"published,omitempty"`
}

// ActionRequest is the body of POST /api/dead/retry and /api/dead/purge:
// ids, or all_matching with optional type and tenant filters.
type ActionRequest struct {
	IDs         []string `json:"ids"`
	AllMatching bool     `json:"all_matching"`
	Type        string   `json:"type"`
	Tenant      string   `json:"tenant"`
}

// ActionDocument is the answer of POST /api/dead/retry and /api/dead/purge,
// shaped as reliar dead retry|purge --json. On failure it also holds the
// error, and the counts say what was done before it.
type ActionDocument struct {
	Action      string `json:"action"`
	AllMatching bool   `json:"all_matching"`
	// Asked is the number of distinct ids named, or of matching rows found.
	Asked int64 `json:"asked"`
	// Done is the number of rows retried or deleted.
	Done    int64  `json:"done"`
	Batches int    `json:"batches"`
	Error   string `json:"error,omitempty"`
}

// statsDocument reads the gauges, the history, and the tenants with due
// rows when the store lists them (Tenants is null otherwise). A failure to
// read the tenants is logged and kept in tenantsErr: the gauges still show.
func (s *Server) statsDocument(ctx context.Context) (StatsDocument, error) {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	st, err := s.cfg.Store.Stats(sctx)
	if err != nil {
		return StatsDocument{}, fmt.Errorf("read the outbox's gauges: %w", err)
	}
	samples := s.history.since(st.AsOf.Add(-s.cfg.History))
	doc := StatsDocument{StatsDocument: ops.NewStatsDocument(st), History: make([]HistoryPoint, 0, len(samples))}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	if ts, listed, err := ops.Tenants(tctx, s.cfg.Store, s.cfg.tenants()); err != nil {
		s.log.Warn("admin page cannot read the tenants", "error", err)
		doc.tenantsErr = err
	} else if listed {
		doc.Tenants = ops.NewTenantDocuments(ts)
	}
	for _, p := range samples {
		hp := HistoryPoint{At: p.At.UTC(), Pending: p.Pending, Due: p.Due, Dead: p.Dead}
		if p.HasPublished {
			hp.Published = &p.Published
		}
		doc.History = append(doc.History, hp)
	}
	if r := publishRates(samples); len(r) > 0 && r[len(r)-1].At.Equal(samples[len(samples)-1].At) {
		doc.PublishedPerMinute = &r[len(r)-1].PerMinute
	}
	if d, ok := averageDrain(samples, drainSpan); ok {
		doc.DrainPerMinute = &d
	}
	return doc, nil
}

func (s *Server) apiStats(w http.ResponseWriter, r *http.Request, _ caller) {
	doc, err := s.statsDocument(r.Context())
	if err != nil {
		s.log.Error("admin page", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

func (s *Server) apiDead(w http.ResponseWriter, r *http.Request, _ caller) {
	f, err := parseFilter(r.URL.Query(), apiLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.StoreTimeout)
	defer cancel()
	page, err := s.cfg.Store.ListDead(ctx, f.query())
	if err != nil {
		s.log.Error("admin page", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("list dead letters: %v", err))
		return
	}
	writeJSON(w, http.StatusOK, ops.NewDeadListDocument(page))
}

// apiAction serves POST /api/dead/retry and /api/dead/purge.
func (s *Server) apiAction(act ops.Action) callerHandler {
	return func(w http.ResponseWriter, r *http.Request, c caller) {
		var req ActionRequest
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("body: want {\"ids\": [...]} or {\"all_matching\": true, \"type\": ..., \"tenant\": ...}: %v", err))
			return
		}
		f, err := parseFilter(map[string][]string{"type": {req.Type}, "tenant": {req.Tenant}}, apiLimit)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if !req.AllMatching && (req.Type != "" || req.Tenant != "") {
			writeError(w, http.StatusBadRequest, "type and tenant select rows with all_matching only")
			return
		}
		a, err := newAction(act, req.IDs, req.AllMatching, f)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		t, err := s.run(r.Context(), a, r, c)
		doc := ActionDocument{Action: act.String(), AllMatching: a.allMatching, Asked: t.Asked, Done: t.Done, Batches: t.Batches}
		status := http.StatusOK
		if err != nil {
			doc.Error, status = err.Error(), actionStatus(err)
		}
		writeJSON(w, status, doc)
	}
}
