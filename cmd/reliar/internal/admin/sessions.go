package admin

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// Session limits: a login lasts a working day, and the sessions kept in
// memory are bounded (the oldest goes first), since only holders of the
// token can create them.
const (
	sessionTTL  = 12 * time.Hour
	maxSessions = 1000
)

// session is one browser's login.
type session struct {
	// csrf is the per-session token every state-changing request of the
	// session must send.
	csrf    string
	expires time.Time
	// flash is a message shown once, on the next page.
	flash      string
	flashError bool
}

// sessions holds the logins, in memory: a restart logs everyone out.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*session
	ttl time.Duration
	max int
	now func() time.Time
}

func newSessions(ttl time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{m: make(map[string]*session), ttl: ttl, max: max, now: now}
}

// randomToken returns 32 random bytes, base64url-encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails: crypto/rand panics instead
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session and returns its id (the cookie's value).
func (ss *sessions) create() (id string, s session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for k, v := range ss.m {
		if !now.Before(v.expires) {
			delete(ss.m, k)
		}
	}
	for len(ss.m) >= ss.max {
		var oldest string
		for k, v := range ss.m {
			if oldest == "" || v.expires.Before(ss.m[oldest].expires) {
				oldest = k
			}
		}
		delete(ss.m, oldest)
	}
	id = randomToken()
	ss.m[id] = &session{csrf: randomToken(), expires: now.Add(ss.ttl)}
	return id, *ss.m[id]
}

// get returns a live session.
func (ss *sessions) get(id string) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return session{}, false
	}
	if !ss.now().Before(s.expires) {
		delete(ss.m, id)
		return session{}, false
	}
	return *s, true
}

// remove ends a session.
func (ss *sessions) remove(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, id)
}

// setFlash leaves a message for the session's next page.
func (ss *sessions) setFlash(id, msg string, isError bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.m[id]; ok {
		s.flash, s.flashError = msg, isError
	}
}

// takeFlash returns the session's message and forgets it.
func (ss *sessions) takeFlash(id string) (msg string, isError bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok {
		return "", false
	}
	msg, isError = s.flash, s.flashError
	s.flash, s.flashError = "", false
	return msg, isError
}
