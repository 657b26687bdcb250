package storetest

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func deadCapCases() []testCase {
	return []testCase{
		{name: "ListDead reads no payload and caps metadata, headers and last_error", run: deadListCaps},
		{name: "DeadPayload reads one dead payload, capped", run: deadPayload},
	}
}

// bigDeadRow inserts a dead row whose payload, metadata and headers are all
// far larger than a listing reads, and returns it.
func (f *fixture) bigDeadRow(payload int) outboxdriver.Row {
	f.t.Helper()
	m := reliar.NewMsg(created{Name: "big"})
	m.Metadata.TenantID = "t-big"
	m.Metadata.Routing.Source = strings.Repeat("s", 3*outboxdriver.ListedDocumentBytes)
	m.Headers = map[string]string{"big": strings.Repeat("h", 3*outboxdriver.ListedDocumentBytes)}
	row, err := outboxdriver.NewRow(f.ctx, m, nil, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	row.Payload = []byte(strings.Repeat("p", payload))
	f.insertRow(row)
	recs := f.claim(1)
	if len(recs) != 1 || recs[0].Envelope.ID != row.ID {
		f.t.Fatalf("claim of the big row: %d records", len(recs))
	}
	f.affected("Fail dead", f.fail(outboxdriver.FailedOutcome{Lease: recs[0].Lease(),
		Error: strings.Repeat("é", outboxdriver.ListedLastErrorBytes), DeadReason: outboxdriver.DeadPermanent}), 1)
	return row
}

func deadListCaps(f *fixture) {
	big := f.bigDeadRow(3 << 20)
	small := f.kill(outboxdriver.DeadPermanent, tenantMsg(created{N: 1}, "t-small"))[0]
	p := f.listDead(outboxdriver.DeadQuery{})
	if len(p.Records) != 2 || len(p.Poisoned) != 0 {
		f.t.Fatalf("ListDead: %d records %d poisoned, want 2 records", len(p.Records), len(p.Poisoned))
	}
	for _, rec := range p.Records {
		if rec.Envelope.Payload != nil {
			f.t.Errorf("row %s: the listing read %d payload bytes, want none", rec.Envelope.ID, len(rec.Envelope.Payload))
		}
		if len(rec.LastError) > outboxdriver.ListedLastErrorBytes || !utf8.ValidString(rec.LastError) {
			f.t.Errorf("row %s: last_error of %d bytes listed, want at most %d of valid UTF-8", rec.Envelope.ID, len(rec.LastError), outboxdriver.ListedLastErrorBytes)
		}
	}
	b, s := p.Records[0], p.Records[1]
	if b.Envelope.ID != big.ID || s.Envelope.ID != small {
		f.t.Fatalf("records %s, %s; want the big row then the small one", b.Envelope.ID, s.Envelope.ID)
	}
	if b.PayloadSize != 3<<20 || !b.MetadataCut || !b.HeadersCut {
		f.t.Errorf("big row: PayloadSize %d MetadataCut %t HeadersCut %t; want %d, true, true", b.PayloadSize, b.MetadataCut, b.HeadersCut, 3<<20)
	}
	// What columns hold is still listed when the documents are cut.
	if e := b.Envelope; e.MessageType != "storetest.created" || e.Metadata.TenantID != "t-big" || len(e.Headers) != 0 || b.DeadReason != outboxdriver.DeadPermanent {
		f.t.Errorf("big row listed as type %q tenant %q headers %d reason %q", e.MessageType, e.Metadata.TenantID, len(e.Headers), b.DeadReason)
	}
	if s.PayloadSize == 0 || s.MetadataCut || s.HeadersCut || s.LastErrorCut || s.Envelope.Metadata.TenantID != "t-small" || s.LastError != "storetest: dead on purpose" {
		f.t.Errorf("small row: PayloadSize %d cut %t/%t/%t tenant %q last_error %q", s.PayloadSize, s.MetadataCut, s.HeadersCut, s.LastErrorCut, s.Envelope.Metadata.TenantID, s.LastError)
	}
}

func deadPayload(f *fixture) {
	big := f.bigDeadRow(1 << 20)
	m := newMsg(7)
	small := f.kill(outboxdriver.DeadPermanent, m)[0]
	pending := f.enqueueN(1)[0]
	want, err := reliar.JSON.Serialize(m.Body)
	if err != nil {
		f.t.Fatal(err)
	}

	p, err := f.h.Store.DeadPayload(f.ctx, big.ID, 100)
	if err != nil {
		f.t.Fatalf("DeadPayload(big, 100): %v", err)
	}
	if string(p.Payload) != strings.Repeat("p", 100) || p.Size != 1<<20 || !p.Cut || p.ID != big.ID ||
		p.MessageType != "storetest.created" || p.ContentType != "application/json" || p.Sequence != f.inspect(big.ID).Sequence {
		f.t.Errorf("DeadPayload(big, 100) = %d bytes, size %d, cut %t, id %s, type %q, content type %q, sequence %d",
			len(p.Payload), p.Size, p.Cut, p.ID, p.MessageType, p.ContentType, p.Sequence)
	}
	p, err = f.h.Store.DeadPayload(f.ctx, big.ID, 0)
	if err != nil || len(p.Payload) != outboxdriver.DefaultDeadPayloadBytes || !p.Cut {
		f.t.Errorf("DeadPayload(big, 0) = %d bytes, cut %t, %v; want the default cap %d", len(p.Payload), p.Cut, err, outboxdriver.DefaultDeadPayloadBytes)
	}
	p, err = f.h.Store.DeadPayload(f.ctx, big.ID, 2<<20)
	if err != nil || len(p.Payload) != 1<<20 || p.Cut {
		f.t.Errorf("DeadPayload(big, 2 MiB) = %d bytes, cut %t, %v; want it whole", len(p.Payload), p.Cut, err)
	}
	p, err = f.h.Store.DeadPayload(f.ctx, small, 0)
	if err != nil || string(p.Payload) != string(want) || p.Cut || p.Size != len(want) {
		f.t.Errorf("DeadPayload(small) = %q, cut %t, size %d, %v; want %q whole", p.Payload, p.Cut, p.Size, err, want)
	}
	for _, id := range []reliar.MessageID{pending, reliar.NewMessageID()} {
		if _, err := f.h.Store.DeadPayload(f.ctx, id, 0); !errors.Is(err, outboxdriver.ErrNotDead) {
			f.t.Errorf("DeadPayload of a row that is not dead: %v, want ErrNotDead", err)
		}
	}
}
