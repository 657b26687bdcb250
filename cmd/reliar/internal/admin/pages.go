package admin

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// pageLimit is the number of dead letters the page shows at once.
const pageLimit = 50

// lastErrorWidth is how much of last_error the table shows; the full text
// is in the cell's title.
const lastErrorWidth = 140

// parseTemplates parses the embedded pages.
func parseTemplates() (*template.Template, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"timestamp": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"rfc3339":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"clip":      func(s string) string { return ops.Clip(s, lastErrorWidth) },
		"capitalize": func(s string) string {
			if s == "" {
				return s
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
	}).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("admin templates: %w", err)
	}
	return t, nil
}

// staticHandler serves the embedded stylesheet and script, and nothing
// else: a path that names a directory, or ends with a slash, is not found,
// so no listing is ever served.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err) // the embedded folder is always there
	}
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Path
		if name == "" || strings.HasSuffix(name, "/") || !fs.ValidPath(name) {
			http.NotFound(w, r)
			return
		}
		if st, err := fs.Stat(sub, name); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
}

// render executes a page into a buffer first, so that a template error
// never sends half a page.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, data); err != nil {
		s.log.Error("admin page cannot be rendered", "page", name, "error", err)
		http.Error(w, "the page cannot be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// loginData fills the login form. It says nothing about the installation
// (no database, host, schema or version): the form is the one page shown
// before authentication.
type loginData struct {
	Error string
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil && ck.Value != "" {
		if _, ok := s.sessions.get(ck.Value); ok {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
	}
	s.render(w, http.StatusOK, "login.html", loginData{})
}

// login checks the token of the login form and starts a session.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if why := crossSite(r); why != "" {
		s.log.Warn("admin request refused: cross-site", "path", r.URL.Path, "why", why, "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, "cross-site request refused")
		return
	}
	if !s.admit(w, r, true) {
		return
	}
	ok := s.tokenMatches(r.PostFormValue("token"))
	s.checkDone(r, ok, "admin login failed")
	if !ok {
		s.render(w, http.StatusUnauthorized, "login.html", loginData{Error: "That token is not valid."})
		return
	}
	id, _ := s.sessions.create()
	setSessionCookie(w, r, id, int(sessionTTL.Seconds()))
	s.log.Info("admin login", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, c caller) {
	s.sessions.remove(c.sessionID)
	setSessionCookie(w, r, "", -1)
	s.log.Info("admin logout", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// deadRow is one dead letter laid out for the table.
type deadRow struct {
	ID         string
	Sequence   int64
	Type       string
	Tenant     string
	Reason     string
	Attempts   int
	LastError  string
	DeadAt     time.Time
	PayloadURL string
}

// tenantRow is one tenant with due rows laid out for the table.
type tenantRow struct {
	// ID is empty for the rows without a tenant.
	ID  string
	Due int64
	// Age is how long its oldest due row has waited, formatted.
	Age string
}

// dashboardData fills the dashboard.
type dashboardData struct {
	Database   string
	ReadOnly   bool
	CSRF       string
	Flash      string
	FlashError bool
	// Error says why the store could not be read.
	Error string
	Stats ops.StatsDocument
	Lag   string
	// Drain is the net drain in rows per minute; empty before two samples.
	Drain string
	// Published is the publish rate in rows per minute; empty before two
	// samples, or when the store does not count published rows
	// (CountsPublished false).
	Published       string
	CountsPublished bool
	Interval        string
	Charts          []chart
	Filter          deadFilter
	Dead            []deadRow
	Poisoned        []outboxdriver.PoisonedRecord
	// TenantsListed says the store lists its tenants: the table shows,
	// Tenants empty when none has due rows.
	TenantsListed bool
	Tenants       []tenantRow
	// TenantsLimit is how many tenants the table shows at most.
	TenantsLimit int
	// TenantsError says why the tenants could not be read.
	TenantsError string
	// NextURL is the next page's address, empty on the last page.
	NextURL string
	// FirstURL is the first page's address, empty on the first page.
	FirstURL string
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request, c caller) {
	d := dashboardData{Database: s.cfg.Database, ReadOnly: s.cfg.ReadOnly, CSRF: c.csrf, Interval: ops.FormatDuration(s.cfg.SampleInterval)}
	d.Flash, d.FlashError = s.sessions.takeFlash(c.sessionID)
	f, err := parseFilter(r.URL.Query(), pageLimit)
	if err != nil {
		d.Flash, d.FlashError = err.Error(), true
		f = deadFilter{Limit: pageLimit}
	}
	if f.Order == "" {
		f.Order = orderOldest
	}
	d.Filter = f
	status := http.StatusOK
	if err := s.fillDashboard(r.Context(), &d); err != nil {
		s.log.Error("admin page", "path", r.URL.Path, "error", err)
		d.Error, status = err.Error(), http.StatusServiceUnavailable
	}
	s.render(w, status, "dashboard.html", d)
}

// fillDashboard reads the gauges and a page of dead letters into d.
func (s *Server) fillDashboard(ctx context.Context, d *dashboardData) error {
	doc, err := s.statsDocument(ctx)
	if err != nil {
		return err
	}
	d.Stats = doc.StatsDocument
	d.Lag = ops.FormatDuration(time.Duration(doc.OldestDueAgeSeconds * float64(time.Second)))
	d.TenantsLimit = s.cfg.tenants()
	if doc.tenantsErr != nil {
		d.TenantsListed, d.TenantsError = true, doc.tenantsErr.Error()
	}
	if doc.Tenants != nil {
		d.TenantsListed = true
		for _, t := range doc.Tenants {
			d.Tenants = append(d.Tenants, tenantRow{ID: t.TenantID, Due: t.Due,
				Age: ops.FormatDuration(time.Duration(t.OldestDueAgeSeconds * float64(time.Second)))})
		}
	}
	if doc.DrainPerMinute != nil {
		d.Drain = formatValue(*doc.DrainPerMinute)
	}
	end := doc.AsOf
	if doc.PublishedPerMinute != nil {
		d.Published = formatValue(*doc.PublishedPerMinute)
	}
	d.Charts = charts(s.history.since(end.Add(-s.cfg.History)), end, s.cfg.History, s.cfg.Published != nil)
	d.CountsPublished = s.cfg.Published != nil

	lctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	page, err := s.cfg.Store.ListDead(lctx, d.Filter.query())
	if err != nil {
		return fmt.Errorf("list dead letters: %w", err)
	}
	for _, rec := range page.Records {
		env := rec.Envelope
		d.Dead = append(d.Dead, deadRow{
			ID: env.ID.String(), Sequence: env.Sequence, Type: env.MessageType,
			Tenant: env.Metadata.TenantID, Reason: string(rec.DeadReason), Attempts: rec.Attempts,
			LastError: rec.LastError, DeadAt: rec.DeadAt,
			PayloadURL: fmt.Sprintf("/api/dead/%s/payload?seq=%d", env.ID, env.Sequence),
		})
	}
	d.Poisoned = page.Poisoned
	next := d.Filter
	switch {
	case d.Filter.Newest() && page.NextBeforeSequence != nil:
		next.Before = *page.NextBeforeSequence
		d.NextURL = next.PageURL()
	case !d.Filter.Newest() && page.NextAfterSequence != nil:
		next.After = *page.NextAfterSequence
		d.NextURL = next.PageURL()
	}
	if d.Filter.After > 0 || d.Filter.Before > 0 {
		d.FirstURL = d.Filter.withOrder(d.Filter.Order).PageURL()
	}
	return nil
}

// pageAction serves the dashboard's retry and purge forms: one row (the
// "only" button), the checked rows ("id"), or every row matching the
// filter (scope=all). It answers with a redirect back to the page, which
// shows what was done.
func (s *Server) pageAction(act ops.Action) callerHandler {
	return func(w http.ResponseWriter, r *http.Request, c caller) {
		if err := r.ParseForm(); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("form: %v", err))
			return
		}
		f, err := parseFilter(r.PostForm, pageLimit)
		if err != nil {
			f = deadFilter{Limit: pageLimit}
		}
		if f.Order == "" {
			f.Order = orderOldest
		}
		all := r.PostForm.Get("scope") == "all"
		var ids []string
		switch {
		case r.PostForm.Get("only") != "":
			ids, all = []string{r.PostForm.Get("only")}, false
		case !all:
			ids = r.PostForm["id"]
		}
		back := f
		if all {
			back = f.withOrder(f.Order)
		}
		a, err := newAction(act, ids, all, f)
		if err != nil {
			s.sessions.setFlash(c.sessionID, err.Error(), true)
			http.Redirect(w, r, back.PageURL(), http.StatusSeeOther)
			return
		}
		t, err := s.run(r.Context(), a, r, c)
		if err != nil {
			s.sessions.setFlash(c.sessionID, fmt.Sprintf("%s Then it failed: %v", summary(a, t), err), true)
		} else {
			s.sessions.setFlash(c.sessionID, summary(a, t), false)
		}
		http.Redirect(w, r, back.PageURL(), http.StatusSeeOther)
	}
}
