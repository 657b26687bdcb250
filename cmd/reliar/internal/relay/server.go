package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Timeouts of the metrics server: a scrape or a probe is small, and a slow
// client must not hold a connection.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
)

// server serves /metrics, /healthz and /readyz until stop.
type server struct {
	srv  *http.Server
	addr string
	log  *slog.Logger
	done chan struct{}
}

// startServer listens on addr and serves in a goroutine of its own, which
// stop waits for.
func startServer(addr string, reg *prometheus.Registry, ready *readiness, log *slog.Logger) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}))
	mux.HandleFunc("GET /healthz", serveHealth)
	mux.HandleFunc("GET /readyz", ready.serveReady)
	s := &server{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
		addr: ln.Addr().String(),
		log:  log,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	return s, nil
}

// stop shuts the server down, letting requests in progress finish for a
// moment, and waits for its goroutine.
func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}
