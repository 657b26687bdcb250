package admin

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Limits of failed credentials: after maxFailures failed logins or bearer
// tokens within failureWindow from one address, the address is refused
// with 429 until the oldest of them is a window old. The table of addresses
// holds at most maxGuarded entries, so that a flood of addresses cannot
// grow it without bound.
const (
	maxFailures   = 10
	failureWindow = time.Minute
	maxGuarded    = 10000
)

// guard counts failed credentials per address and refuses an address that
// failed too often. It is safe for concurrent use.
type guard struct {
	mu     sync.Mutex
	m      map[string]*failures
	limit  int
	window time.Duration
	max    int
	now    func() time.Time
	// skew is added to now, for tests.
	skew time.Duration
}

// failures are one address's recent failures, oldest first, at most
// limit of them.
type failures struct {
	at []time.Time
	// pending counts the address's credential checks under way: they count
	// toward the limit until they succeed, so that a flood of concurrent
	// requests cannot slip past it.
	pending int
	// logged is set once the address's burst was logged.
	logged bool
}

func newGuard(limit int, window time.Duration, max int, now func() time.Time) *guard {
	return &guard{m: make(map[string]*failures), limit: limit, window: window, max: max, now: now}
}

// advance moves the guard's clock forward (tests only).
func (g *guard) advance(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.skew += d
}

func (g *guard) clock() time.Time { return g.now().Add(g.skew) }

// addressKey is the address a request counts against: the remote IP, or
// for IPv6 its /64, which one host usually holds whole.
func addressKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// prune drops the failures of f older than the window, as of now.
func (g *guard) prune(f *failures, now time.Time) {
	i := 0
	for i < len(f.at) && !now.Before(f.at[i].Add(g.window)) {
		i++
	}
	f.at = f.at[i:]
	if len(f.at) < g.limit {
		f.logged = false
	}
}

// admit reserves one credential check for remote, to be ended with done.
// It refuses (false, with how long still) an address whose failures and
// checks under way reach the limit.
func (g *guard) admit(remote string) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := addressKey(remote)
	now := g.clock()
	f := g.m[key]
	if f == nil {
		g.makeRoom(now)
		f = &failures{}
		g.m[key] = f
	}
	g.prune(f, now)
	if len(f.at)+f.pending >= g.limit {
		if len(f.at) == 0 {
			// Only checks under way: they end within a request.
			return time.Second, false
		}
		return f.at[0].Add(g.window).Sub(now), false
	}
	f.pending++
	return 0, true
}

// done ends a check admit reserved. A failure is recorded; done returns
// true when it reached the limit and the burst was not logged yet: the
// caller logs it, once.
func (g *guard) done(remote string, failed bool) (burst bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := addressKey(remote)
	now := g.clock()
	f := g.m[key]
	if f == nil {
		if !failed {
			return false
		}
		g.makeRoom(now)
		f = &failures{}
		g.m[key] = f
	}
	f.pending = max(f.pending-1, 0)
	if !failed {
		if len(f.at) == 0 && f.pending == 0 {
			delete(g.m, key)
		}
		return false
	}
	g.prune(f, now)
	f.at = append(f.at, now)
	if len(f.at) > g.limit {
		f.at = f.at[len(f.at)-g.limit:]
	}
	if len(f.at) >= g.limit && !f.logged {
		f.logged = true
		return true
	}
	return false
}

// blocked reports whether remote is refused now, and for how long still.
func (g *guard) blocked(remote string) (time.Duration, bool) {
	wait, ok := g.admit(remote)
	if ok {
		g.done(remote, false)
	}
	return wait, !ok
}

// fail records one failed check of remote.
func (g *guard) fail(remote string) (burst bool) {
	g.admit(remote)
	return g.done(remote, true)
}

// makeRoom drops addresses whose failures are all older than the window
// and, if the table is still full, the address whose last failure is the
// oldest.
func (g *guard) makeRoom(now time.Time) {
	if len(g.m) < g.max {
		return
	}
	var oldest string
	var oldestAt time.Time
	for k, f := range g.m {
		g.prune(f, now)
		if len(f.at) == 0 && f.pending == 0 {
			delete(g.m, k)
			continue
		}
		last := now
		if len(f.at) > 0 {
			last = f.at[len(f.at)-1]
		}
		if oldest == "" || last.Before(oldestAt) {
			oldest, oldestAt = k, last
		}
	}
	if len(g.m) >= g.max {
		delete(g.m, oldest)
	}
}

// retryAfter is the Retry-After value of a wait: whole seconds, at least 1.
func retryAfter(wait time.Duration) string {
	secs := int((wait + time.Second - 1) / time.Second)
	return strconv.Itoa(max(secs, 1))
}

// admit reserves a credential check for r, or answers 429 with
// Retry-After when r's address failed too often and reports false. Pages and
// the login form get the form with a message; the API gets a JSON error. A
// check admitted is ended with s.checked.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, asPage bool) bool {
	wait, ok := s.guard.admit(r.RemoteAddr)
	if ok {
		return true
	}
	w.Header().Set("Retry-After", retryAfter(wait))
	msg := "Too many failed attempts from this address; try again in " + retryAfter(wait) + " s."
	if asPage {
		s.render(w, http.StatusTooManyRequests, "login.html", loginData{Error: msg})
		return false
	}
	writeError(w, http.StatusTooManyRequests, msg)
	return false
}

// burstMessage is logged once per address and burst of failures.
const burstMessage = "admin: too many failed logins or bearer tokens; refusing the address"

// checkDone ends r's credential check. A failure is logged with msg, and
// the burst once when the address reaches the limit.
func (s *Server) checkDone(r *http.Request, ok bool, msg string) {
	if !s.guard.done(r.RemoteAddr, !ok) {
		if !ok {
			s.log.Warn(msg, "remote", r.RemoteAddr)
		}
		return
	}
	s.log.Warn(msg, "remote", r.RemoteAddr)
	s.log.Warn(burstMessage, "remote", addressKey(r.RemoteAddr), "failures", maxFailures,
		"window", failureWindow.String(), "retry_after_seconds", retryAfter(failureWindow))
}
