package admin

import (
	"net/http"
	"sync"
)

// tracker counts the requests in progress, so that Serve returns only after
// the last handler has.
type tracker struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{}
}

// enter counts a request in; it returns false once closeAndWait was called.
func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false
	}
	t.n++
	return true
}

// leave counts a request out.
func (t *tracker) leave() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// closeAndWait refuses new requests and waits for those in progress.
func (t *tracker) closeAndWait() {
	t.mu.Lock()
	t.closing = true
	if t.n == 0 {
		t.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	t.idle = idle
	t.mu.Unlock()
	<-idle
}

// track wraps h so that the tracker counts its requests; once closing, it
// answers 503.
func (t *tracker) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.enter() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		defer t.leave()
		h.ServeHTTP(w, r)
	})
}
