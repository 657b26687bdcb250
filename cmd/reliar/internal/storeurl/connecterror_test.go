package storeurl

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refusedAddr returns a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRefusedConnectionSaysSoOnce: a refused connection is one line that
// says "connection refused" once, whatever number of attempts the driver
// made (pgx tries TLS, then plain, under sslmode=prefer).
func TestRefusedConnectionSaysSoOnce(t *testing.T) {
	addr := refusedAddr(t)
	for _, raw := range []string{
		"postgres://postgres:pw@" + addr + "/test",
		"postgres://postgres:pw@" + addr + "/test?sslmode=disable",
		"mysql://root:pw@" + addr + "/test",
	} {
		loc, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		b, err := loc.Open(ctx, Options{})
		cancel()
		if err == nil {
			b.Close(context.Background())
			t.Fatalf("%s: connected where nothing listens", loc)
		}
		msg := err.Error()
		var ce *ConnectError
		if !errors.As(err, &ce) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: %v, want a *ConnectError wrapping ECONNREFUSED", loc, err)
		}
		if n := strings.Count(msg, "connection refused"); n != 1 || strings.Contains(msg, "\n") || strings.Contains(msg, ":pw@") {
			t.Errorf("%s: %q says connection refused %d times, want once, on one line, without the password", loc, msg, n)
		}
	}
}
