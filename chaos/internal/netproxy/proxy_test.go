package netproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer answers every line with the same line and records what it
// received.
type echoServer struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	got  []string
	seen chan struct{}
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, seen: make(chan struct{}, 16)}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					s.mu.Lock()
					s.got = append(s.got, line)
					s.mu.Unlock()
					s.seen <- struct{}{}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.wg.Wait()
	})
	return s
}

func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(c net.Conn, r *bufio.Reader, line string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(line)); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	return r.ReadString('\n')
}

func TestProxyFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault func(p *Proxy)
		// reply: the echo comes back; reaches: the server gets the line.
		reply, reaches bool
		minTook        time.Duration
	}{
		{name: "healthy", fault: func(*Proxy) {}, reply: true, reaches: true},
		{name: "delay", fault: func(p *Proxy) { p.SetDelay(150 * time.Millisecond) }, reply: true, reaches: true, minTook: 150 * time.Millisecond},
		{name: "cut acknowledgements", fault: func(p *Proxy) { p.CutAcks(true) }, reply: false, reaches: true},
		{name: "down", fault: func(p *Proxy) { p.Down() }, reply: false, reaches: false},
		{name: "healed", fault: func(p *Proxy) { p.Down(); p.CutAcks(true); p.SetDelay(time.Hour); p.Heal() }, reply: true, reaches: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startEcho(t)
			p := startProxy(t, srv.ln.Addr().String())
			tt.fault(p)
			c, r := dial(t, p)
			start := time.Now()
			got, err := roundTrip(c, r, "hello\n", 500*time.Millisecond+tt.minTook)
			if tt.reply != (err == nil && got == "hello\n") {
				t.Fatalf("reply = %q, %v; want a reply: %v", got, err, tt.reply)
			}
			if took := time.Since(start); took < tt.minTook {
				t.Fatalf("round trip took %v, want at least %v", took, tt.minTook)
			}
			select {
			case <-srv.seen:
				if !tt.reaches {
					t.Fatal("the server received a line through a proxy that is down")
				}
			case <-time.After(200 * time.Millisecond):
				if tt.reaches {
					t.Fatal("the server never received the line")
				}
			}
		})
	}
}

func TestCutAcksOffClosesConnections(t *testing.T) {
	srv := startEcho(t)
	p := startProxy(t, srv.ln.Addr().String())
	c, r := dial(t, p)
	p.CutAcks(true)
	if _, err := roundTrip(c, r, "lost\n", 200*time.Millisecond); err == nil {
		t.Fatal("an answer came back while acknowledgements were cut")
	}
	p.CutAcks(false)
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := r.ReadString('\n'); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("read after the cut ended = %v, want the connection closed", err)
	}
	c2, r2 := dial(t, p)
	if got, err := roundTrip(c2, r2, "again\n", time.Second); err != nil || got != "again\n" {
		t.Fatalf("a new connection = %q, %v", got, err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
