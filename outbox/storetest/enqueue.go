package storetest

import (
	"errors"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func enqueueCases() []testCase {
	return []testCase{
		{name: "one call carries messages of mixed types", run: enqueueMixed},
		{name: "a reused id fails and writes nothing", run: enqueueDuplicate},
		{name: "a payload over the limit fails and writes nothing", run: enqueueTooLarge},
	}
}

func enqueueMixed(f *fixture) {
	msgs := []reliar.Outgoing{reliar.NewMsg(created{N: 1}), reliar.NewMsg(renamed{From: "a", To: "b"}), reliar.NewMsg(blob{Data: "z"})}
	f.enqueue(msgs...)
	want := map[reliar.MessageID]struct {
		typ     string
		version uint16
	}{
		msgs[0].ID: {"storetest.created", 1},
		msgs[1].ID: {"storetest.renamed", 3},
		msgs[2].ID: {"storetest.blob", 1},
	}
	recs := f.claim(10)
	if !sameIDs(recordIDs(recs), msgIDs(msgs)) {
		f.t.Fatalf("claimed %v, want %v", recordIDs(recs), msgIDs(msgs))
	}
	for _, r := range recs {
		w := want[r.Envelope.ID]
		if r.Envelope.MessageType != w.typ || r.Envelope.MessageVersion != w.version {
			f.t.Errorf("row %s: type %q version %d, want %q %d", r.Envelope.ID, r.Envelope.MessageType, r.Envelope.MessageVersion, w.typ, w.version)
		}
	}
}

func enqueueDuplicate(f *fixture) {
	first := newMsg(1)
	f.enqueue(first)
	reuse := newMsg(2)
	reuse.ID = first.ID
	twice := newMsg(3)
	for _, c := range []struct {
		name  string
		msgs  []reliar.Outgoing
		fresh reliar.MessageID
	}{
		{"an id already stored", []reliar.Outgoing{newMsg(4), reuse}, reliar.MessageID{}},
		{"the same id twice in one call", []reliar.Outgoing{twice, twice}, twice.ID},
	} {
		if c.fresh == (reliar.MessageID{}) {
			c.fresh = c.msgs[0].ID
		}
		err := f.h.Enqueue(f.ctx, c.msgs...)
		if !errors.Is(err, outboxdriver.ErrDuplicateID) {
			f.t.Errorf("%s: Enqueue error %v, want one matching outboxdriver.ErrDuplicateID", c.name, err)
		}
		f.gone(c.fresh)
	}
	if st := f.stats(); st.Pending != 1 {
		f.t.Errorf("Stats.Pending = %d, want only the first row", st.Pending)
	}
	recs := f.claim(10)
	if len(recs) != 1 || recs[0].Envelope.MessageType != "storetest.created" {
		f.t.Fatalf("claimed %v, want only the first row", recordIDs(recs))
	}
}

func enqueueTooLarge(f *fixture) {
	small := newMsg(1)
	big := reliar.NewMsg(blob{Data: strings.Repeat("x", outboxdriver.DefaultMaxPayloadBytes)})
	err := f.h.Enqueue(f.ctx, small, big)
	if !errors.Is(err, outboxdriver.ErrPayloadTooLarge) {
		f.t.Fatalf("Enqueue of a %d-byte payload: error %v, want one matching outboxdriver.ErrPayloadTooLarge", outboxdriver.DefaultMaxPayloadBytes+len(`{"data":""}`), err)
	}
	f.gone(small.ID)
	f.gone(big.ID)
	f.enqueue(reliar.NewMsg(blob{Data: strings.Repeat("x", outboxdriver.DefaultMaxPayloadBytes/2)}))
}
