package natspub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// The users of authServer: admin may do anything; relay may publish only
// on the JetStream API and "other.>", and receive its acks on _INBOX.>.
const (
	adminUser, adminPass = "admin", "admin-secret"
	relayUser, relayPass = "relay", "relay-secret"
	authStreamPrefix     = "orders"
)

// authOptions returns the options of an in-process NATS server with
// JetStream and the two users; relayPublish is what relay may publish to.
func authOptions(storeDir string, relayPublish ...string) *server.Options {
	return &server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		NoSigs:    true,
		NoLog:     true,
		JetStream: true,
		StoreDir:  storeDir,
		Users: []*server.User{
			{Username: adminUser, Password: adminPass},
			{Username: relayUser, Password: relayPass, Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: relayPublish},
				Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
			}},
		},
	}
}

// startAuthServer starts an in-process NATS server of authOptions, with a
// stream on "orders.>" created as admin, shut down at the end of t.
func startAuthServer(t *testing.T, relayPublish ...string) (*server.Server, *server.Options, jetstream.Stream) {
	t.Helper()
	opts := authOptions(t.TempDir(), relayPublish...)
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo(adminUser, adminPass))
	if err != nil {
		t.Fatalf("connect as admin: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{authStreamPrefix + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	return ns, opts, s
}

// TestPermissionViolationIsTransient publishes as a user the server does
// not allow to publish on the stream's subject: the server answers with a
// permissions violation, a condition every message shares and an operator
// fixes, so Publish must fail transiently. Once the operator grants the
// permission (a configuration reload), the same publisher delivers.
func TestPermissionViolationIsTransient(t *testing.T) {
	ns, opts, stream := startAuthServer(t, "$JS.API.>", "other.>")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// The server reports the violation asynchronously, on the connection.
	async := make(chan error, 16)
	p, err := natspub.Connect(ctx, ns.ClientURL(),
		natspub.WithSubjectPrefix(authStreamPrefix),
		natspub.WithConnOptions(nats.UserInfo(relayUser, relayPass),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
				select {
				case async <- err:
				default:
				}
			})))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer p.Close()

	pctx, pcancel := context.WithTimeout(t.Context(), 2*time.Second)
	err = p.Publish(pctx, publishertest.Envelope(1))
	pcancel()
	if err == nil {
		t.Fatal("Publish succeeded without publish permission")
	}
	if reliar.IsPermanent(err) {
		t.Fatalf("Publish = %v, a permanent failure; a permissions violation must be transient", err)
	}
	select {
	case aerr := <-async:
		if !errors.Is(aerr, nats.ErrPermissionViolation) {
			t.Fatalf("the server reported %v, want a permissions violation", aerr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server reported no permissions violation")
	}

	// The operator grants the permission.
	granted := authOptions(opts.StoreDir, "$JS.API.>", "other.>", authStreamPrefix+".>")
	granted.Port = opts.Port
	if err := ns.ReloadOptions(granted); err != nil {
		t.Fatalf("reload: %v", err)
	}
	env := publishertest.Envelope(2)
	var perr error
	for perr = p.Publish(ctx, env); perr != nil && ctx.Err() == nil; perr = p.Publish(ctx, env) {
		if reliar.IsPermanent(perr) {
			t.Fatalf("Publish after the grant: %v", perr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if perr != nil {
		t.Fatalf("Publish never succeeded after the grant: %v", perr)
	}
	got, err := newStreamReader(stream).Receive(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if id := got[0].Message.(*nats.Msg).Header.Get(jetstream.MsgIDHeader); id != env.ID.String() {
		t.Fatalf("stored message %q, want %s", id, env.ID)
	}
}

// TestRefusedCredentialsOnConnect connects with a wrong password: the
// server refuses the connection with an authorization violation, which
// must not be permanent; the right password then connects and delivers.
func TestRefusedCredentialsOnConnect(t *testing.T) {
	ns, _, stream := startAuthServer(t, "$JS.API.>", authStreamPrefix+".>")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, wrong := range []struct{ name, user, pass string }{
		{"wrong password", relayUser, "wrong"},
		{"unknown user", "nobody", relayPass},
	} {
		p, err := natspub.Connect(ctx, ns.ClientURL(),
			natspub.WithSubjectPrefix(authStreamPrefix),
			natspub.WithConnOptions(nats.UserInfo(wrong.user, wrong.pass)))
		if err == nil {
			_ = p.Close()
			t.Fatalf("%s: Connect succeeded", wrong.name)
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Errorf("%s: Connect = %v, want it to wrap %v", wrong.name, err, nats.ErrAuthorization)
		}
		if reliar.IsPermanent(err) {
			t.Fatalf("%s: Connect = %v, a permanent failure; refused credentials must be transient", wrong.name, err)
		}
	}

	p, err := natspub.Connect(ctx, ns.ClientURL(),
		natspub.WithSubjectPrefix(authStreamPrefix),
		natspub.WithConnOptions(nats.UserInfo(relayUser, relayPass)))
	if err != nil {
		t.Fatalf("Connect with the right password: %v", err)
	}
	defer p.Close()
	env := publishertest.Envelope(1)
	if err := p.Publish(ctx, env); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	got, err := newStreamReader(stream).Receive(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if id := got[0].Message.(*nats.Msg).Header.Get(jetstream.MsgIDHeader); id != env.ID.String() {
		t.Fatalf("stored message %q, want %s", id, env.ID)
	}
}
