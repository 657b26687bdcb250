package broker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestSubjectCovers(t *testing.T) {
	tests := []struct {
		pattern, filter string
		want            bool
	}{
		{"shop.>", "shop.>", true},
		{">", "shop.>", true},
		{"*.>", "shop.>", true},
		{"shop.*", "shop.>", false},
		{"shop.order_placed", "shop.>", false},
		{"shop.a.>", "shop.>", false},
		{"other.>", "shop.>", false},
		{"a.b.>", "a.b.>", true},
		{"a.*.>", "a.b.>", true},
		{"a.>", "a.b.>", true},
		{"a", "a.>", false},
	}
	for _, tt := range tests {
		if got := subjectCovers(tt.pattern, tt.filter); got != tt.want {
			t.Errorf("subjectCovers(%q, %q) = %v, want %v", tt.pattern, tt.filter, got, tt.want)
		}
	}
}

func TestStreamName(t *testing.T) {
	for prefix, want := range map[string]string{"shop": "SHOP", "acme.orders": "ACME_ORDERS", "a/b": "A_B"} {
		if got := streamName(prefix); got != want {
			t.Errorf("streamName(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// inspect runs Inspect on url and o and returns its one finding.
func inspect(t *testing.T, url string, o Options) Finding {
	t.Helper()
	loc, err := Parse(url, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	fs, err := loc.Inspect(ctx)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if len(fs) != 1 {
		t.Fatalf("Inspect returned %d findings, want 1: %+v", len(fs), fs)
	}
	return fs[0]
}

// jetStream connects to the test server's JetStream.
func jetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// dropStream deletes a stream when the test ends, if it exists.
func dropStream(t *testing.T, js jetstream.JetStream, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("delete stream %s: %v", name, err)
		}
	})
}

// TestInspectNATS: red with no stream for the prefix, warn with a stream
// on one subject under it, ok with a stream on "<prefix>.>".
func TestInspectNATS(t *testing.T) {
	js := jetStream(t)
	prefix := unique("relay_inspect_")
	o := Options{SubjectPrefix: prefix}
	f := inspect(t, natsURL, o)
	if f.Verdict != FindingRed || !strings.Contains(f.Found, prefix+".>") || !strings.Contains(f.Fix, "--create-stream") {
		t.Errorf("no stream: %+v, want red naming %s.> with the --create-stream fix", f, prefix)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix + "_one", Subjects: []string{prefix + ".order_placed"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	dropStream(t, js, prefix+"_one")
	if f := inspect(t, natsURL, o); f.Verdict != FindingWarn || !strings.Contains(f.Found, prefix+".order_placed") {
		t.Errorf("a stream on one subject: %+v, want warn naming it", f)
	}
	if err := js.DeleteStream(t.Context(), prefix+"_one"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	dropStream(t, js, prefix)
	if f := inspect(t, natsURL, o); f.Verdict != FindingOK || !strings.Contains(f.Found, prefix) {
		t.Errorf("a stream on %s.>: %+v, want ok", prefix, f)
	}
}

// TestNATSDiagnosesAMissingStream: a publish to a subject no stream
// captures is diagnosed with the subject and the fix; the recheck says
// it is still broken; with CreateStream, Open creates the stream and the
// publish goes through.
func TestNATSDiagnosesAMissingStream(t *testing.T) {
	js := jetStream(t)
	prefix := unique("relay_diag_")
	b := open(t, natsURL, Options{SubjectPrefix: prefix})
	env := envelope("order_placed")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := b.Publisher.Publish(ctx, env)
	p := b.Diagnose(env, err)
	if p == nil {
		t.Fatalf("Diagnose(%v) = nil, want a missing stream", err)
	}
	if p.Destination != b.Destination(env) || !strings.Contains(p.Destination, prefix+".order_placed") || !strings.Contains(p.Fix, "nats stream add") {
		t.Errorf("problem %+v; Destination(env) = %q", p, b.Destination(env))
	}
	if fixed, known, err := p.Recheck(ctx); fixed || !known || err != nil {
		t.Errorf("Recheck with no stream = %v, %v, %v; want not fixed, known", fixed, known, err)
	}
	if b.Diagnose(env, errors.New("some outage")) != nil {
		t.Error("Diagnose took an unrelated error for a missing stream")
	}

	dropStream(t, js, streamName(prefix))
	created := open(t, natsURL, Options{SubjectPrefix: prefix, CreateStream: true})
	publish(t, created, "order_placed")
	if fixed, known, err := p.Recheck(ctx); !fixed || !known || err != nil {
		t.Errorf("Recheck after the stream was created = %v, %v, %v; want fixed", fixed, known, err)
	}
	s, err := js.Stream(ctx, streamName(prefix))
	if err != nil {
		t.Fatalf("the stream CreateStream was to create: %v", err)
	}
	if subj := s.CachedInfo().Config.Subjects; len(subj) != 1 || subj[0] != prefix+".>" {
		t.Errorf("created stream's subjects = %v, want [%s.>]", subj, prefix)
	}
}

// TestInspectAMQP: red for a missing exchange, ok once declared and for
// the default exchange.
func TestInspectAMQP(t *testing.T) {
	exchange := unique("relay_inspect_x_")
	f := inspect(t, amqpURL, Options{Exchange: exchange})
	if f.Verdict != FindingRed || !strings.Contains(f.Found, exchange) || !strings.Contains(f.Fix, "declare") {
		t.Errorf("missing exchange: %+v, want red", f)
	}
	ch := amqpChannel(t)
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.ExchangeDelete(exchange, false, false) })
	if f := inspect(t, amqpURL, Options{Exchange: exchange}); f.Verdict != FindingOK {
		t.Errorf("declared exchange: %+v, want ok", f)
	}
	if f := inspect(t, amqpURL, Options{Exchange: "-"}); f.Verdict != FindingOK {
		t.Errorf("default exchange: %+v, want ok", f)
	}
}

// TestAMQPDiagnosesTheExchange: a message the exchange routes nowhere and
// an exchange deleted under the relay are both diagnosed; only the
// missing exchange can be rechecked without a publish.
func TestAMQPDiagnosesTheExchange(t *testing.T) {
	exchange := unique("relay_diag_x_")
	ch := amqpChannel(t)
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.ExchangeDelete(exchange, false, false) })
	b := open(t, amqpURL, Options{Exchange: exchange, RoutingKey: "{type}"})
	env := envelope("order_placed")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	err := b.Publisher.Publish(ctx, env)
	p := b.Diagnose(env, err)
	if p == nil || !strings.Contains(p.Missing, "order_placed") || p.Destination != b.Destination(env) {
		t.Fatalf("unroutable: Diagnose(%v) = %+v", err, p)
	}
	if _, known, _ := p.Recheck(ctx); known {
		t.Error("Recheck of an unroutable message claims to know without a publish")
	}

	if err := ch.ExchangeDelete(exchange, false, false); err != nil {
		t.Fatal(err)
	}
	err = b.Publisher.Publish(ctx, env)
	p = b.Diagnose(env, err)
	if p == nil || !strings.Contains(p.Missing, "does not exist") {
		t.Fatalf("deleted exchange: Diagnose(%v) = %+v", err, p)
	}
	if fixed, known, err := p.Recheck(ctx); fixed || !known || err != nil {
		t.Errorf("Recheck of the deleted exchange = %v, %v, %v; want not fixed, known", fixed, known, err)
	}
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if fixed, known, err := p.Recheck(ctx); !fixed || !known || err != nil {
		t.Errorf("Recheck of the declared exchange = %v, %v, %v; want fixed", fixed, known, err)
	}
}

// amqpChannel opens a channel to the test broker, closed when the test
// ends.
func amqpChannel(t *testing.T) *amqp091.Channel {
	t.Helper()
	conn, err := amqp091.Dial(amqpURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestKafkaMissingTopics: Inspect names the topics --topic maps that the cluster
// lacks; a publish to one is diagnosed with the topic.
func TestKafkaMissingTopics(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	url := "kafka://" + strings.Join(cluster.ListenAddrs(), ",")
	o := Options{Topics: []string{"orders", "invoice_issued=invoices"}}
	f := inspect(t, url, o)
	if f.Verdict != FindingRed || !strings.Contains(f.Found, "missing topics: invoices") {
		t.Errorf("Inspect = %+v, want red naming invoices", f)
	}
	if f := inspect(t, url, Options{Topics: []string{"orders"}}); f.Verdict != FindingOK {
		t.Errorf("Inspect with existing topics = %+v, want ok", f)
	}

	b := open(t, url, o)
	env := envelope("invoice_issued")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err = b.Publisher.Publish(ctx, env)
	p := b.Diagnose(env, err)
	if p == nil || p.Destination != `Kafka topic "invoices"` || p.Destination != b.Destination(env) {
		t.Fatalf("Diagnose(%v) = %+v", err, p)
	}
	if fixed, known, err := p.Recheck(ctx); fixed || !known || err != nil {
		t.Errorf("Recheck = %v, %v, %v; want not fixed, known", fixed, known, err)
	}
	publish(t, b, "order_placed")
}
