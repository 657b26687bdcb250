package amqppub_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to RabbitMQ, so that a test can cut them
// as a failing network or broker would, stop accepting new ones, and hold
// back what the broker sends.
type proxy struct {
	t      testing.TB
	target string
	addr   string

	mu     sync.Mutex
	ln     net.Listener
	conns  []*link
	open   chan struct{} // closed while the broker's bytes flow
	closed bool

	wg sync.WaitGroup
}

// link is one forwarded connection.
type link struct {
	client, server net.Conn
	dead           chan struct{} // closed when cut
}

func (l *link) cut() {
	close(l.dead)
	_ = l.client.Close()
	_ = l.server.Close()
}

func newProxy(t testing.TB) *proxy {
	t.Helper()
	p := &proxy{t: t, target: "127.0.0.1:5672", open: make(chan struct{})}
	close(p.open)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.shutdown)
	return p
}

// url is the broker URL through the proxy.
func (p *proxy) url() string { return "amqp://guest:guest@" + p.addr + "/" }

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.forward(c)
		}
	})
}

func (p *proxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	l := &link{client: client, server: server, dead: make(chan struct{})}
	p.conns = append(p.conns, l)
	p.mu.Unlock()
	p.wg.Go(func() {
		_, _ = io.Copy(server, client)
		_ = server.Close()
	})
	p.wg.Go(func() {
		p.copyGated(l)
		_ = client.Close()
	})
}

// copyGated copies the broker's bytes to the client, waiting while the
// proxy is paused.
func (p *proxy) copyGated(l *link) {
	buf := make([]byte, 32<<10)
	for {
		n, err := l.server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			open := p.open
			p.mu.Unlock()
			select {
			case <-open:
			case <-l.dead:
				return
			}
			if _, werr := l.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pause holds back everything the broker sends until resume.
func (p *proxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default:
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// cut closes every forwarded connection, as a broker restart would.
func (p *proxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, l := range conns {
		l.cut()
	}
}

// stop stops accepting connections and cuts the open ones: the broker is
// unreachable until start.
func (p *proxy) stop() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	p.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	p.cut()
}

// start accepts connections again on the same address.
func (p *proxy) start() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

func (p *proxy) shutdown() {
	p.resume()
	p.stop()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cut()
	p.wg.Wait()
}
