package redispub_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

// wrongType is the message type the suite harness routes to a key that
// holds a string, not a stream.
const wrongType = "publishertest.wrongtype"

// stringKey returns a fresh key holding a plain string.
func stringKey(t testing.TB, c *redis.Client) string {
	t.Helper()
	key := uniqueKey(t, c, "string")
	if err := c.Set(t.Context(), key, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	return key
}

func TestPublisherSuite(t *testing.T) {
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		c := newClient(t)
		stream, notStream := uniqueKey(t, c, "stream"), stringKey(t, c)
		return publishertest.Harness{
			Publisher: newPublisher(t, c, redispub.WithStreamFunc(func(e *reliar.SerializedEnvelope) string {
				if e.MessageType == wrongType {
					return notStream
				}
				return stream
			})),
			Receive: (&streamReader{client: c, stream: stream, last: "0"}).Receive,
			Decode: func(r publishertest.Received) (*reliar.SerializedEnvelope, error) {
				return redispub.Envelope(r.Message.(map[string]any))
			},
			Reference: traceReference,
			// A key holding a string is a misconfiguration every message
			// to it shares.
			Unroutable: func(t *testing.T) reliar.Publisher {
				return newPublisher(t, c, redispub.WithStream(notStream))
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				if err := c.Set(t.Context(), stream, "not a stream yet", 0).Err(); err != nil {
					t.Fatal(err)
				}
				return newPublisher(t, c, redispub.WithStream(stream)), func() {
					if err := c.Del(t.Context(), stream).Err(); err != nil {
						t.Fatal(err)
					}
				}
			},
			Broken: func(t *testing.T) reliar.Publisher {
				broken := redis.NewClient(&redis.Options{Addr: closedAddr(t), DialTimeout: 200 * time.Millisecond, MaxRetries: 1})
				t.Cleanup(func() { _ = broken.Close() })
				return newPublisher(t, broken)
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.Headers[redispub.PayloadField] = "a user header named like the payload field"
				return e
			},
			Features: publishertest.Features{
				Batch: true,
				Limitations: "Redis acknowledges from memory: how durable an entry is depends on the " +
					"server's appendonly/appendfsync settings, which the suite does not exercise; " +
					"streams neither deduplicate nor have a partition key",
			},
		}
	})
}

func TestFieldLayout(t *testing.T) {
	c := newClient(t)
	stream := uniqueKey(t, c, "stream")
	p := newPublisher(t, c, redispub.WithStream(stream))
	e := publishertest.Envelope(1)
	e.Payload = []byte{0, 1, 2, 0xff, 0xfe} // not UTF-8: stored as it is
	if err := p.Publish(t.Context(), e); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// The raw reply keeps the field order that XRangeN's map loses.
	raw, err := c.Do(t.Context(), "XRANGE", stream, "-", "+").Slice()
	if err != nil || len(raw) != 1 {
		t.Fatalf("XRANGE: %d entries, %v", len(raw), err)
	}
	fields := raw[0].([]any)[1].([]any)
	var names []string
	values := map[string]any{}
	for i := 0; i < len(fields); i += 2 {
		names = append(names, fields[i].(string))
		values[fields[i].(string)] = fields[i+1]
	}
	want := append(slices.Sorted(maps.Keys(reliar.CloudEventHeaders(e))), "payload")
	if !slices.Equal(names, want) {
		t.Errorf("fields %v, want the sorted headers then payload: %v", names, want)
	}
	if got := []byte(values["payload"].(string)); !bytes.Equal(got, e.Payload) {
		t.Errorf("payload %x, want %x", got, e.Payload)
	}
	d, err := redispub.Envelope(values)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := publishertest.Compare(e, d); err != nil {
		t.Error(err)
	}
}

func TestPublishRefuses(t *testing.T) {
	c := newClient(t)
	stream := uniqueKey(t, c, "stream")
	tests := []struct {
		name string
		opts []redispub.Option
		edit func(e *reliar.SerializedEnvelope)
		want error
	}{
		{"user header named payload", []redispub.Option{redispub.WithStream(stream)},
			func(e *reliar.SerializedEnvelope) { e.Headers["payload"] = "x" }, redispub.ErrReservedField},
		{"empty stream name", []redispub.Option{redispub.WithStreamFunc(func(*reliar.SerializedEnvelope) string { return "" })},
			func(*reliar.SerializedEnvelope) {}, redispub.ErrInvalidStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPublisher(t, c, tt.opts...)
			e := publishertest.Envelope(1)
			tt.edit(e)
			errs := append(p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{e}), p.Publish(t.Context(), e))
			for _, err := range errs {
				if !errors.Is(err, tt.want) || !reliar.IsPermanent(err) {
					t.Errorf("publish: %v, want a permanent %v", err, tt.want)
				}
			}
		})
	}
	if n := c.Exists(t.Context(), stream).Val(); n != 0 {
		t.Fatal("a refused message was added")
	}
}

// TestACLAndAuthErrorsAreTransient: a forbidden key and refused
// credentials are shared by every message and an operator fixes them, so
// they fail transiently; the same publisher delivers once the ACL allows
// it.
func TestACLAndAuthErrorsAreTransient(t *testing.T) {
	c := newClient(t)
	allowed := uniqueKey(t, c, "allowed")
	user := "reliartest_" + allowed[len(allowed)-12:]
	// The user may run every command, but only on the allowed key.
	if err := c.Do(t.Context(), "ACL", "SETUSER", user, "on", ">secret", "~"+allowed, "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Do(ctx, "ACL", "DELUSER", user).Err(); err != nil {
			t.Errorf("ACL DELUSER %s: %v", user, err)
		}
	})
	tests := []struct {
		name     string
		password string
		stream   string
		wantOK   bool
	}{
		{"allowed key", "secret", allowed, true},
		{"forbidden key (NOPERM)", "secret", allowed + ":other", false},
		{"wrong password (WRONGPASS)", "nope", allowed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uc := redis.NewClient(&redis.Options{Addr: redisAddr, Username: user, Password: tt.password, MaxRetries: -1})
			defer uc.Close()
			err := newPublisher(t, uc, redispub.WithStream(tt.stream)).Publish(t.Context(), publishertest.Envelope(1))
			if tt.wantOK != (err == nil) || (err != nil && reliar.IsPermanent(err)) {
				t.Fatalf("Publish: %v; want success %v, else a transient error", err, tt.wantOK)
			}
		})
	}
	// The operator widens the ACL: the forbidden key's messages now go.
	if err := c.Do(t.Context(), "ACL", "SETUSER", user, "~"+allowed+":other").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	uc := redis.NewClient(&redis.Options{Addr: redisAddr, Username: user, Password: "secret", MaxRetries: -1})
	defer uc.Close()
	if err := newPublisher(t, uc, redispub.WithStream(allowed+":other")).Publish(t.Context(), publishertest.Envelope(2)); err != nil {
		t.Fatalf("Publish once the ACL allows the key: %v", err)
	}
	t.Cleanup(func() { c.Del(context.Background(), allowed+":other") })
}

func TestMaxLen(t *testing.T) {
	c := newClient(t)
	stream := uniqueKey(t, c, "stream")
	p := newPublisher(t, c, redispub.WithStream(stream), redispub.WithMaxLen(10))
	const total = 1000
	for range total / 100 {
		envs := make([]*reliar.SerializedEnvelope, 100)
		for i := range envs {
			envs[i] = publishertest.Envelope(i)
		}
		for i, err := range p.PublishBatch(t.Context(), envs) {
			if err != nil {
				t.Fatalf("PublishBatch result %d: %v", i, err)
			}
		}
	}
	// Approximate trimming removes whole nodes (100 entries by default).
	if n := c.XLen(t.Context(), stream).Val(); n < 10 || n > 200 {
		t.Fatalf("stream holds %d of %d entries, want about 10 (MAXLEN ~ 10)", n, total)
	}
}

func TestNewValidates(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		name   string
		client redis.UniversalClient
		opts   []redispub.Option
	}{
		{"nil client", nil, nil},
		{"empty stream", c, []redispub.Option{redispub.WithStream("")}},
		{"nil stream func", c, []redispub.Option{redispub.WithStreamFunc(nil)}},
		{"stream and func", c, []redispub.Option{redispub.WithStream("a"),
			redispub.WithStreamFunc(func(*reliar.SerializedEnvelope) string { return "b" })}},
		{"zero max len", c, []redispub.Option{redispub.WithMaxLen(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := redispub.New(tt.client, tt.opts...); !errors.Is(err, redispub.ErrInvalidOption) {
				t.Fatalf("New: %v, want ErrInvalidOption", err)
			}
		})
	}
}

func TestEnvelope(t *testing.T) {
	e := publishertest.Envelope(1)
	values := map[string]any{"payload": e.Payload}
	for k, v := range reliar.CloudEventHeaders(e) {
		values[k] = []byte(v) // bytes, as some clients return them
	}
	d, err := redispub.Envelope(values)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := publishertest.Compare(e, d); err != nil {
		t.Error(err)
	}
	tests := []struct {
		name   string
		values map[string]any
		want   error
	}{
		{"no payload", map[string]any{"ce-id": e.ID.String()}, redispub.ErrNoPayload},
		{"payload not a string", map[string]any{"payload": 7}, nil},
		{"field not a string", map[string]any{"payload": "x", "ce-id": 7}, nil},
		{"bad ce-id", map[string]any{"payload": "x", "ce-id": "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := redispub.Envelope(tt.values)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Decode: %v, want an error (%v)", err, tt.want)
			}
		})
	}
}
