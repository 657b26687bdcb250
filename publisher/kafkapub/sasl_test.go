package kafkapub_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestRefusedCredentialsAreTransient starts a kfake cluster that requires
// SASL and publishes with a wrong password: the broker refuses the
// authentication, which every message shares and an operator fixes, so
// Publish must fail transiently (the dispatcher's breaker counts it and
// nothing is dead-lettered). A publisher with the right password then
// delivers to the same cluster.
func TestRefusedCredentialsAreTransient(t *testing.T) {
	t.Parallel()
	const user, pass = "relay", "right-password"
	tests := []struct {
		method string
		mech   func(user, pass string) sasl.Mechanism
	}{
		{"PLAIN", func(u, p string) sasl.Mechanism { return plain.Auth{User: u, Pass: p}.AsMechanism() }},
		{"SCRAM-SHA-256", func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha256Mechanism() }},
		{"SCRAM-SHA-512", func(u, p string) sasl.Mechanism { return scram.Auth{User: u, Pass: p}.AsSha512Mechanism() }},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			topic := uniqueTopic(t)
			c, err := kfake.NewCluster(
				kfake.NumBrokers(1),
				kfake.EnableSASL(),
				kfake.Superuser(tc.method, user, pass),
				kfake.SeedTopics(3, topic),
			)
			if err != nil {
				t.Fatalf("start kfake: %v", err)
			}
			t.Cleanup(c.Close)

			for _, wrong := range []struct{ name, user, pass string }{
				{"wrong password", user, "wrong-password"},
				{"unknown user", "nobody", pass},
			} {
				p := newPublisher(t, c, append(fastRetries(), kgo.SASL(tc.mech(wrong.user, wrong.pass))), kafkapub.WithDefaultTopic(topic))
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				start := time.Now()
				err := p.Publish(ctx, envelope(1, "orders.placed"))
				cancel()
				if err == nil {
					t.Fatalf("%s: Publish succeeded with refused credentials", wrong.name)
				}
				// kfake closes the connection on a refused authentication;
				// franz-go retries it until the publish's context ends.
				if reliar.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s: Publish = %v, want a transient failure at the publish deadline; refused credentials must never be permanent", wrong.name, err)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("%s: Publish returned after %v, long past its deadline", wrong.name, d)
				}
			}

			// The operator fixes the credentials: the same cluster takes
			// the message.
			p := newPublisher(t, c, []kgo.Opt{kgo.SASL(tc.mech(user, pass))}, kafkapub.WithDefaultTopic(topic))
			ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
			defer cancel()
			env := envelope(2, "orders.placed")
			if err := p.Publish(ctx, env); err != nil {
				t.Fatalf("Publish with the right credentials: %v", err)
			}
			recs := consume(t, c, topic, 1, kgo.SASL(tc.mech(user, pass)))
			if id, err := kafkapub.MessageID(recs[0]); err != nil || id != env.ID {
				t.Fatalf("consumed %v, %v; want %s", id, err, env.ID)
			}
		})
	}
}

// TestSASLAuthenticationFailedIsTransient is the same refusal, answered
// the way Apache Kafka answers it: kfake closes the connection on a wrong
// password, while Kafka replies to SaslAuthenticate with
// SASL_AUTHENTICATION_FAILED. A control function on kfake's
// SaslAuthenticate handler gives that answer to every PLAIN exchange that
// does not carry the right password; the right one goes through kfake's own
// handler. franz-go keeps the record buffered and retries the connection
// until the publish's context ends, so Publish fails with the context's
// error, transient; the right password then delivers.
func TestSASLAuthenticationFailedIsTransient(t *testing.T) {
	t.Parallel()
	const user, pass = "relay", "right-password"
	topic := uniqueTopic(t)
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.EnableSASL(),
		kfake.Superuser("PLAIN", user, pass),
		kfake.SeedTopics(3, topic),
	)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	var refused atomic.Int64
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		areq := req.(*kmsg.SASLAuthenticateRequest)
		if bytes.Equal(areq.SASLAuthBytes, []byte("\x00"+user+"\x00"+pass)) {
			return nil, nil, false
		}
		refused.Add(1)
		resp := areq.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr("Authentication failed: Invalid username or password")
		return resp, nil, true
	})

	mech := func(p string) kgo.Opt { return kgo.SASL(plain.Auth{User: user, Pass: p}.AsMechanism()) }
	p := newPublisher(t, c, append(fastRetries(), mech("wrong-password")), kafkapub.WithDefaultTopic(topic))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	err = p.Publish(ctx, envelope(1, "orders.placed"))
	cancel()
	if err == nil || reliar.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish = %v, want a transient failure at the publish deadline", err)
	}
	if refused.Load() == 0 {
		t.Fatal("the broker never refused an authentication")
	}

	ctx, cancel = context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	p = newPublisher(t, c, []kgo.Opt{mech(pass)}, kafkapub.WithDefaultTopic(topic))
	env := envelope(2, "orders.placed")
	if err := p.Publish(ctx, env); err != nil {
		t.Fatalf("Publish with the right credentials: %v", err)
	}
	recs := consume(t, c, topic, 1, mech(pass))
	if id, err := kafkapub.MessageID(recs[0]); err != nil || id != env.ID {
		t.Fatalf("consumed %v, %v; want %s", id, err, env.ID)
	}
}
