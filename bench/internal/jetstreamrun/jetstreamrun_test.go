package jetstreamrun

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/sink"
)

func TestSystems(t *testing.T) {
	for _, sys := range []harness.System{
		Reliar(DefaultURL, reliarrun.Defaults(), File),
		Reliar(DefaultURL, reliarrun.Batch512(), File),
		Reliar(DefaultURL, reliarrun.Defaults(), Memory),
		HandWritten(DefaultURL, MsgIDOnly, File),
		HandWritten(DefaultURL, CloudEvents, File),
		HandWritten(DefaultURL, CloudEvents, Memory),
		HandWritten(DefaultURL, CloudEvents, Core),
	} {
		t.Run(sys.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, sys, true)
		})
	}
}

// TestSameHeaders checks, on the wire, that the hand-written pipeline with
// CloudEvents headers sends the header set Reliar's NATS publisher sends:
// the same names, the same values where they do not depend on the message,
// and values of the same form where they do.
func TestSameHeaders(t *testing.T) {
	reliarHeaders := firstHeaders(t, Reliar(DefaultURL, reliarrun.Defaults(), File))
	for _, sys := range []harness.System{HandWritten(DefaultURL, CloudEvents, File), HandWritten(DefaultURL, CloudEvents, Core)} {
		got := firstHeaders(t, sys)
		if want, have := slices.Sorted(maps.Keys(reliarHeaders)), slices.Sorted(maps.Keys(got)); !slices.Equal(want, have) {
			t.Errorf("%s sends headers %q, Reliar sends %q", sys.Name, have, want)
			continue
		}
		for name, vals := range reliarHeaders {
			want, have := vals[0], got[name][0]
			switch name {
			case reliar.HeaderConversationID:
				// Both are their message's own conversation.
				if have != got[reliar.HeaderID][0] || want != reliarHeaders[reliar.HeaderID][0] {
					t.Errorf("%s: %s = %q (ce-id %q); Reliar sends %q (ce-id %q)", sys.Name, name, have, got[reliar.HeaderID][0], want, reliarHeaders[reliar.HeaderID][0])
				}
			case reliar.HeaderID, jetstream.MsgIDHeader:
				if _, err := uuid.Parse(have); err != nil || have != got[reliar.HeaderID][0] {
					t.Errorf("%s: %s = %q, want the message id (ce-id %q)", sys.Name, name, have, got[reliar.HeaderID][0])
				}
			case reliar.HeaderTime:
				if _, err := time.Parse(time.RFC3339Nano, have); err != nil {
					t.Errorf("%s: %s = %q: %v", sys.Name, name, have, err)
				}
			case reliar.HeaderSequence:
				if _, err := strconv.ParseInt(have, 10, 64); err != nil {
					t.Errorf("%s: %s = %q: %v", sys.Name, name, have, err)
				}
			default:
				if have != want {
					t.Errorf("%s: %s = %q, Reliar sends %q", sys.Name, name, have, want)
				}
			}
		}
	}
	if _, ok := reliarHeaders[reliar.HeaderType]; !ok || len(reliarHeaders) < 6 {
		t.Fatalf("Reliar sent only %v", reliarHeaders)
	}
	oneHeader := firstHeaders(t, HandWritten(DefaultURL, MsgIDOnly, File))
	if len(oneHeader) != 1 || len(oneHeader[jetstream.MsgIDHeader]) != 1 {
		t.Fatalf("the one-header pipeline sent %v", oneHeader)
	}
}

// firstHeaders runs sys on a fresh schema with one message and returns the
// headers of what arrived on the stream's subjects.
func firstHeaders(t *testing.T, sys harness.System) nats.Header {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	env, drop, err := pgenv.Fresh(ctx, pgenv.DefaultDSN, "headers")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drop(context.WithoutCancel(ctx)) })
	tgt, err := sys.Open(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgt.Close(context.WithoutCancel(ctx)) })
	nc, err := nats.Connect(DefaultURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync(tgt.(*target).st.prefix + ".>")
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tgt.Enqueue(ctx, []payload.Doc{payload.New(0, time.Now().UnixNano())}); err != nil {
		t.Fatal(err)
	}
	s := sink.New(1)
	stop, err := tgt.Start(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the sink did not get the message")
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	return msg.Header
}
