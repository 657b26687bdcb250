package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type secretBody struct {
	Card string `json:"card"`
}

func (secretBody) MessageType() string { return "payments.captured" }

// Payload bytes and header values never reach the logs, at any level and
// on every path: success, retry, dead letter, panic, poison, drain.
func TestLogsNeverContainPayloadsOrHeaderValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const payloadSecret, headerSecret = "4111-1111-1111-1111", "Bearer-s3cr3t-token"
		var logs lockedBuffer
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		store := newFaultStore()
		var msgs []reliar.Outgoing
		for range 6 {
			m := reliar.NewMsg(secretBody{Card: payloadSecret})
			m.Headers = map[string]string{"authorization": headerSecret}
			msgs = append(msgs, m)
		}
		ids, err := store.Enqueue(context.Background(), msgs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.InsertRow(outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "x", Payload: []byte(payloadSecret), Headers: []byte(`{"authorization":42}`)}); err != nil {
			t.Fatal(err)
		}
		pub := newFakePublisher(func(ctx context.Context, env *reliar.SerializedEnvelope) error {
			switch env.ID {
			case ids[0]:
				return errTransient
			case ids[1]:
				return reliar.Permanent(errors.New("rejected by broker"))
			case ids[2]:
				panic("publisher bug")
			case ids[3]:
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		s := testSettings()
		s.StatsInterval = time.Second
		d, _ := outbox.New(store, pub, s, outbox.WithLogger(logger))
		stop, _ := running(t, d)
		time.Sleep(3 * time.Second)
		stop()
		out := logs.String()
		if !strings.Contains(out, "publish failed") || !strings.Contains(out, "undecodable") {
			t.Fatalf("the failure paths did not log; test is not exercising them:\n%s", out)
		}
		for _, secret := range []string{payloadSecret, headerSecret} {
			if strings.Contains(out, secret) {
				t.Fatalf("logs contain %q:\n%s", secret, out)
			}
		}
	})
}
