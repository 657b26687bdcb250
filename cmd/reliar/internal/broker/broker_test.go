package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/reliar/reliar"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The services the tests use; they fail when one is missing.
const (
	natsURL  = "nats://127.0.0.1:4222"
	redisURL = "redis://127.0.0.1:6379/0"
	amqpURL  = "amqp://guest:guest@127.0.0.1:5672/"
	// closedAddr is a local port nothing listens on.
	closedAddr = "127.0.0.1:1"
)

func TestParse(t *testing.T) {
	secret := "whsec_" + strings.Repeat("A", 43) + "="
	tests := []struct {
		name    string
		url     string
		opts    Options
		kind    string
		wantErr error
	}{
		{"nats", "nats://127.0.0.1:4222", Options{SubjectPrefix: "orders"}, "nats", nil},
		{"nats cluster", "nats://a:4222,nats://b:4222", Options{}, "nats", nil},
		{"nats upper-case scheme", "NATS://127.0.0.1:4222", Options{}, "nats", nil},
		{"tls", "tls://u:p@127.0.0.1:4222", Options{}, "nats", nil},
		{"nats without host", "nats://", Options{}, "", ErrBadURL},
		{"nats list with another scheme", "nats://a:4222,http://b", Options{}, "", ErrBadURL},
		{"kafka", "kafka://a:9092,b:9092", Options{Topics: []string{"orders"}}, "kafka", nil},
		{"kafka trailing slash", "kafka://a:9092/", Options{}, "kafka", nil},
		{"kafka no port", "kafka://a", Options{}, "", ErrBadURL},
		{"kafka path", "kafka://a:9092/x", Options{}, "", ErrBadURL},
		{"kafka credentials", "kafka://u:p@a:9092", Options{}, "", ErrBadURL},
		{"kafka empty", "kafka://", Options{}, "", ErrBadURL},
		{"amqp", "amqp://guest:guest@127.0.0.1:5672/", Options{Exchange: "-", RoutingKey: "{type}"}, "amqp", nil},
		{"amqps", "amqps://h/vhost", Options{Exchange: "orders"}, "amqp", nil},
		{"amqp bad port", "amqp://h:port/", Options{}, "", ErrBadURL},
		{"redis", "redis://127.0.0.1:6379/0", Options{Stream: "orders"}, "redis", nil},
		{"rediss", "rediss://:pw@h:6380", Options{}, "redis", nil},
		{"redis bad db", "redis://h:6379/notanumber", Options{}, "", ErrBadURL},
		{"webhook", "https://hooks.example.com/x", Options{WebhookSecrets: []string{secret}}, "webhook", nil},
		{"webhook without secret", "https://hooks.example.com/x", Options{}, "", ErrBadOption},
		{"webhook bad secret", "http://h/x", Options{WebhookSecrets: []string{"not base64!"}}, "", ErrBadOption},
		{"empty", " ", Options{}, "", ErrBadURL},
		{"no scheme", "127.0.0.1:4222", Options{}, "", ErrBadURL},
		{"unknown scheme", "mqtt://h", Options{}, "", ErrBadURL},
		{"option of another broker", "nats://h:4222", Options{Stream: "s"}, "", ErrBadOption},
		{"webhook secret for kafka", "kafka://h:1", Options{WebhookSecrets: []string{secret}}, "", ErrBadOption},
		{"two default topics", "kafka://h:1", Options{Topics: []string{"a", "b"}}, "", ErrBadOption},
		{"topic mapped twice", "kafka://h:1", Options{Topics: []string{"t=a", "t=b"}}, "", ErrBadOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.url, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Parse(%q) = %v, want %v", tt.url, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.url, err)
			}
			if loc.Kind() != tt.kind {
				t.Errorf("Kind = %q, want %q", loc.Kind(), tt.kind)
			}
		})
	}
}

func TestParseRedactsSecrets(t *testing.T) {
	tests := []struct {
		url  string
		opts Options
	}{
		{"amqp://u:hunter2@h:5672/", Options{Topics: []string{"x"}}},
		{"redis://:hunter2@h:6379/zz", Options{}},
		{"mqtt://u:hunter2@h", Options{}},
		{"https://u:hunter2@h/x", Options{}},
	}
	for _, tt := range tests {
		_, err := Parse(tt.url, tt.opts)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Parse(%q) = %v, want an error without the password", tt.url, err)
		}
	}
	loc, err := Parse("nats://tok3n@h:4222", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc.String(), "tok3n") {
		t.Errorf("String() = %q shows the token", loc.String())
	}
}

func TestKafkaTopics(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		n      int // options returned
		bad    bool
	}{
		{"none: the default topic", nil, 1, false},
		{"one default", []string{"orders"}, 1, false},
		{"mappings only", []string{"a=x", "b=y"}, 1, false},
		{"default and mappings", []string{"a=x", "orders"}, 2, false},
		{"two defaults", []string{"a", "b"}, 0, true},
		{"duplicate mapping", []string{"a=x", "a=y"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := kafkaTopics(tt.values)
			if (err != nil) != tt.bad || len(opts) != tt.n {
				t.Fatalf("kafkaTopics(%q) = %d options, %v; want %d, error %v", tt.values, len(opts), err, tt.n, tt.bad)
			}
		})
	}
}

func TestRoutingKey(t *testing.T) {
	env := &reliar.SerializedEnvelope{MessageType: "order_placed", OrderingKey: "customer-7"}
	tests := []struct{ template, want string }{
		{"fixed", "fixed"},
		{"{type}", "order_placed"},
		{"orders.{type}.{key}", "orders.order_placed.customer-7"},
		{"{unknown}", "{unknown}"},
	}
	for _, tt := range tests {
		if got := routingKey(tt.template)(env); got != tt.want {
			t.Errorf("routingKey(%q) = %q, want %q", tt.template, got, tt.want)
		}
	}
}

// envelope returns a message to publish in the tests.
func envelope(typ string) *reliar.SerializedEnvelope {
	id := reliar.MessageID(uuid.Must(uuid.NewV7()))
	return &reliar.SerializedEnvelope{
		ID: id, MessageType: typ, MessageVersion: 1, ContentType: "application/json",
		Payload: []byte(`{"n":1}`), Metadata: reliar.Metadata{Correlation: reliar.Correlation{ConversationID: uuid.UUID(id)}},
	}
}

// open parses and opens a broker, closed when the test ends.
func open(t *testing.T, url string, o Options) *Broker {
	t.Helper()
	loc, err := Parse(url, o)
	if err != nil {
		t.Fatalf("Parse(%q): %v", url, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	b, err := loc.Open(ctx)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// check runs Check with a short deadline.
func check(t *testing.T, b *Broker) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	return b.Check(ctx)
}

// TestCheckReportsTheConnection: Check is nil against the running services
// and an error against a port nothing listens on, where the NATS, Kafka and
// Redis brokers still open (they connect in the background or lazily).
func TestCheckReportsTheConnection(t *testing.T) {
	up := []struct{ name, url string }{
		{"nats", natsURL},
		{"redis", redisURL},
		{"amqp", amqpURL},
	}
	for _, tt := range up {
		t.Run(tt.name+" up", func(t *testing.T) {
			var o Options
			if tt.name == "amqp" {
				o.Exchange = "-"
			}
			if err := check(t, open(t, tt.url, o)); err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
	down := []struct{ name, url string }{
		{"nats", "nats://" + closedAddr},
		{"redis", "redis://" + closedAddr},
		{"kafka", "kafka://" + closedAddr},
	}
	for _, tt := range down {
		t.Run(tt.name+" down", func(t *testing.T) {
			if err := check(t, open(t, tt.url, Options{})); err == nil {
				t.Fatal("Check = nil for a broker nothing listens on")
			}
		})
	}
	t.Run("amqp down", func(t *testing.T) {
		loc, err := Parse("amqp://guest:guest@"+closedAddr+"/", Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if b, err := loc.Open(ctx); err == nil {
			_ = b.Close()
			t.Fatal("Open succeeded with nothing listening")
		}
	})
	t.Run("webhook", func(t *testing.T) {
		b := open(t, "http://"+closedAddr+"/x", Options{WebhookSecrets: []string{"whsec_" + strings.Repeat("A", 43) + "="}})
		if err := check(t, b); err != nil {
			t.Fatalf("Check = %v; a webhook has no connection to check", err)
		}
	})
}

// TestOpenRefusesBadOptions: options a publisher refuses when it is built
// match ErrBadOption.
func TestOpenRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		url  string
		o    Options
	}{
		{"nats subject prefix", natsURL, Options{SubjectPrefix: "a..b"}},
		{"kafka topic", "kafka://" + closedAddr, Options{Topics: []string{"bad topic!"}}},
		{"amqp exchange", amqpURL, Options{Exchange: strings.Repeat("x", 300)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.url, tt.o)
			if err == nil {
				var b *Broker
				b, err = loc.Open(t.Context())
				if err == nil {
					_ = b.Close()
				}
			}
			if !errors.Is(err, ErrBadOption) {
				t.Fatalf("error %v, want ErrBadOption", err)
			}
		})
	}
}
