package storetest

import (
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func poisonCases() []testCase {
	return []testCase{
		{name: "undecodable rows go dead and the batch goes on", run: poisonSweep},
	}
}

// poisonRow is a raw row with only the required columns set.
func poisonRow() outboxdriver.Row {
	return outboxdriver.Row{ID: reliar.NewMessageID(), MessageType: "storetest.poison", Payload: []byte(`{}`)}
}

// plantPoison inserts one row of each kind of poison and returns their ids.
func (f *fixture) plantPoison() []reliar.MessageID {
	f.t.Helper()
	badJSON := poisonRow()
	badJSON.Metadata = []byte(`{"correlation": not json`)
	badJSON.MetadataVersion = ptr(outboxdriver.MetadataVersion)

	badVersion := poisonRow()
	badVersion.Metadata = []byte(`{}`)
	badVersion.MetadataVersion = ptr(outboxdriver.MetadataVersion + 98)

	badHeaders := poisonRow()
	badHeaders.Headers = []byte(`{"retries": 3, "nested": {"a": "b"}}`)

	var ids []reliar.MessageID
	for _, r := range []outboxdriver.Row{badJSON, badVersion, badHeaders} {
		f.insertRow(r)
		ids = append(ids, r.ID)
	}
	return ids
}

func poisonSweep(f *fixture) {
	poison := f.plantPoison()
	good := f.enqueueN(1)[0]
	b := f.acquire(outboxdriver.AcquireRequest{BatchSize: 10})
	if len(b.Records) != 1 || b.Records[0].Envelope.ID != good {
		f.t.Fatalf("Records = %v, want only the good row %s", recordIDs(b.Records), good)
	}
	if b.Len() != 4 {
		f.t.Errorf("batch Len() = %d, want 4 (one record, three poisoned)", b.Len())
	}
	got := make([]reliar.MessageID, len(b.Poisoned))
	for i, p := range b.Poisoned {
		got[i] = p.ID
		st := f.inspect(p.ID)
		if p.Sequence != st.Sequence || p.Error == "" {
			f.t.Errorf("poisoned %s: Sequence %d Error %q; want the stored sequence %d and the decode error", p.ID, p.Sequence, p.Error, st.Sequence)
		}
		if deref(st.DeadReason) != string(outboxdriver.DeadUndecodable) || st.DeadAt == nil || st.PublishedAt != nil {
			f.t.Errorf("poisoned %s: dead_reason %v dead_at %v published_at %v; want undecodable, set, NULL",
				p.ID, deref(st.DeadReason), deref(st.DeadAt), deref(st.PublishedAt))
		}
		if want := outboxdriver.SanitizeError(p.Error); deref(st.LastError) != want {
			f.t.Errorf("poisoned %s: last_error %v, want the decode error %q", p.ID, deref(st.LastError), want)
		}
		if st.Attempts != 0 {
			f.t.Errorf("poisoned %s: attempts %d, want 0 (a decode failure is not an attempt)", p.ID, st.Attempts)
		}
		f.leaseCleared(p.ID, st)
	}
	if !sameIDs(got, poison) {
		f.t.Fatalf("Poisoned = %v, want %v", got, poison)
	}
	f.claimNone("the poison is dead and the good row leased")
	if st := f.stats(); st.Dead != 3 || st.Leased != 1 {
		f.t.Errorf("Stats: Dead %d Leased %d; want 3 1", st.Dead, st.Leased)
	}
}
