// Package netproxy is a TCP proxy that injects network faults between a
// relay and its broker: it can refuse the broker, delay what the client
// sends, and cut what the broker answers (acknowledgements) while still
// forwarding what the client sends.
package netproxy

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections from its listener to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool          // refuse: close new connections, existing ones closed
	cutAcks bool          // discard target→client bytes
	delay   time.Duration // added before each client→target chunk is written
	links   map[*link]struct{}
	closed  bool

	wg sync.WaitGroup
}

// link is one proxied connection.
type link struct {
	client, target net.Conn
	once           sync.Once
}

func (l *link) close() {
	l.once.Do(func() {
		_ = l.client.Close()
		_ = l.target.Close()
	})
}

// Start listens on a free loopback port and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, links: make(map[*link]struct{})}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Down makes the target unreachable: open connections are closed and new
// ones are closed as soon as they are accepted.
func (p *Proxy) Down() {
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	p.closeLinks()
}

// CutAcks discards everything the target sends while on, so requests reach
// the target and their answers never come back. Turning it off closes the
// open connections, whose byte streams lost data, so clients reconnect.
func (p *Proxy) CutAcks(on bool) {
	p.mu.Lock()
	was := p.cutAcks
	p.cutAcks = on
	p.mu.Unlock()
	if was && !on {
		p.closeLinks()
	}
}

// SetDelay delays each chunk the client sends by d before forwarding it.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Heal undoes every fault: up, no delay, acknowledgements forwarded.
func (p *Proxy) Heal() {
	p.CutAcks(false)
	p.SetDelay(0)
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// Close stops the proxy, closes every connection and waits for its
// goroutines, at most until ctx ends.
func (p *Proxy) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.closeLinks()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("netproxy: close: %w", ctx.Err())
	}
}

func (p *Proxy) state() (down, cut bool, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down, p.cutAcks, p.delay
}

func (p *Proxy) closeLinks() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // listener closed
		}
		if down, _, _ := p.state(); down {
			_ = c.Close()
			continue
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

func (p *Proxy) serve(client net.Conn) {
	target, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	l := &link{client: client, target: target}
	p.mu.Lock()
	if p.closed || p.down {
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
		l.close()
	}()
	var wg sync.WaitGroup
	wg.Go(func() { p.pump(l, target, client, true) })
	p.pump(l, client, target, false)
	wg.Wait()
}

// pump copies src to dst until either side fails, applying the faults of
// its direction; on return it closes the link so the other pump ends too.
func (p *Proxy) pump(l *link, dst, src net.Conn, fromClient bool) {
	defer l.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, cut, delay := p.state()
			switch {
			case fromClient && delay > 0:
				time.Sleep(delay)
			case !fromClient && cut:
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF, or a side closed
		}
	}
}
