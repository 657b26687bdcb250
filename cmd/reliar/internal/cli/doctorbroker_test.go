package cli

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

	"github.com/reliar/reliar/cmd/reliar/internal/doctor"
)

// TestDoctorChecksTheBroker: with --broker, doctor checks what the relay
// needs on the broker: red while no JetStream stream captures the subject
// prefix, ok once one does; red for a missing exchange and a missing Kafka
// topic; red for a broker nothing listens on. Without --broker there is
// no broker check.
func TestDoctorChecksTheBroker(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	if rep, _ := doctorRun(t, tg); hasBrokerCheck(rep) {
		t.Fatalf("a broker check without --broker: %+v", rep.Checks)
	}

	prefix := randomName("doctor_")
	rep, code := doctorRun(t, tg, "--broker", "nats://127.0.0.1:4222", "--subject-prefix", prefix)
	c := verdict(t, rep, "broker: nats stream")
	if c.Verdict != doctor.Red || code != 1 || !strings.Contains(c.Found, prefix+".>") || !strings.Contains(c.Fix, "--create-stream") {
		t.Errorf("no stream: exit %d, %+v", code, c)
	}
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, prefix); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("delete stream: %v", err)
		}
	})
	rep, _ = doctorRun(t, tg, "--broker", "nats://127.0.0.1:4222", "--subject-prefix", prefix)
	if c := verdict(t, rep, "broker: nats stream"); c.Verdict != doctor.OK {
		t.Errorf("with the stream: %+v", c)
	}

	exchange := randomName("doctor_x_")
	rep, _ = doctorRun(t, tg, "--broker", "amqp://guest:guest@127.0.0.1:5672/", "--exchange", exchange)
	if c := verdict(t, rep, "broker: amqp exchange"); c.Verdict != doctor.Red || !strings.Contains(c.Found, exchange) {
		t.Errorf("missing exchange: %+v", c)
	}
	conn, err := amqp091.Dial("amqp://guest:guest@127.0.0.1:5672/")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.ExchangeDelete(exchange, false, false) }()
	rep, _ = doctorRun(t, tg, "--broker", "amqp://guest:guest@127.0.0.1:5672/", "--exchange", exchange)
	if c := verdict(t, rep, "broker: amqp exchange"); c.Verdict != doctor.OK {
		t.Errorf("declared exchange: %+v", c)
	}

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	kafka := "kafka://" + strings.Join(cluster.ListenAddrs(), ",")
	rep, _ = doctorRun(t, tg, "--broker", kafka, "--topic", "orders", "--topic", "invoice_issued=invoices")
	if c := verdict(t, rep, "broker: kafka topics"); c.Verdict != doctor.Red || !strings.Contains(c.Found, "missing topics: invoices") {
		t.Errorf("missing topic: %+v", c)
	}

	rep, _ = doctorRun(t, tg, "--broker", "nats://127.0.0.1:1", "--timeout", "20s")
	if c := verdict(t, rep, doctor.CheckBroker); c.Verdict != doctor.Red {
		t.Errorf("unreachable broker: %+v", c)
	}
}

// hasBrokerCheck reports whether rep holds a check of the broker.
func hasBrokerCheck(rep doctor.Report) bool {
	for _, c := range rep.Checks {
		if strings.HasPrefix(c.Name, doctor.CheckBroker) {
			return true
		}
	}
	return false
}
