package redispub_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

// redisAddr is the Redis server the tests run against. A test fails, never
// skips, when it is not there.
const redisAddr = "127.0.0.1:6379"

// newClient returns a client of the test server, closed at the end of t.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping Redis at %s: %v", redisAddr, err)
	}
	return c
}

// uniqueKey returns a key no other test uses, deleted at the end of t.
func uniqueKey(t testing.TB, c *redis.Client, kind string) string {
	t.Helper()
	key := "reliartest:" + kind + ":" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Del(ctx, key).Err(); err != nil {
			t.Errorf("delete %s: %v", key, err)
		}
	})
	return key
}

func newPublisher(t testing.TB, c redis.UniversalClient, opts ...redispub.Option) *redispub.Publisher {
	t.Helper()
	p, err := redispub.New(c, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// streamReader reads a stream's entries in order with XRANGE: what it
// returns is what Redis stored.
type streamReader struct {
	client *redis.Client
	stream string
	last   string
}

func (r *streamReader) Receive(ctx context.Context, n int) ([]publishertest.Received, error) {
	var got []publishertest.Received
	for len(got) < n {
		msgs, err := r.client.XRangeN(ctx, r.stream, "("+r.last, "+", int64(n-len(got))).Result()
		if err != nil {
			return got, fmt.Errorf("read stream %s: %w", r.stream, err)
		}
		for _, m := range msgs {
			r.last = m.ID
			got = append(got, received(m))
		}
		if len(msgs) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("read stream %s: %w", r.stream, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return got, nil
}

// received maps an entry to what the suite checks, without the package's
// own Decode: every field but "payload" is a header.
func received(m redis.XMessage) publishertest.Received {
	r := publishertest.Received{Headers: make(map[string]string, len(m.Values)), Message: m.Values}
	for k, v := range m.Values {
		if k == "payload" {
			r.Payload = []byte(v.(string))
		} else {
			r.Headers[k] = v.(string)
		}
	}
	return r
}

// closedAddr returns a local address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
