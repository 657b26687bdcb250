package admin

import (
	"net/http"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// routes builds the server's handler.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", staticHandler())
	mux.HandleFunc("GET /login", s.loginForm)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.page(s.checked(s.logout)))
	mux.HandleFunc("GET /{$}", s.page(s.dashboard))
	mux.HandleFunc("POST /dead/retry", s.page(s.write(s.pageAction(ops.Retry))))
	mux.HandleFunc("POST /dead/purge", s.page(s.write(s.pageAction(ops.Delete))))

	mux.HandleFunc("GET /api/stats", s.api(s.apiStats))
	mux.HandleFunc("GET /api/dead", s.api(s.apiDead))
	mux.HandleFunc("POST /api/dead/retry", s.api(s.write(s.apiAction(ops.Retry))))
	mux.HandleFunc("POST /api/dead/purge", s.api(s.write(s.apiAction(ops.Delete))))
	mux.HandleFunc("GET /api/dead/{id}/payload", s.api(s.apiPayload))
	return securityHeaders(s.inflight.track(mux))
}
