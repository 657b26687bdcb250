package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"24h", 24 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{" 14d ", 14 * Day, true},
		{"0d", 0, true},
		{"0s", 0, true},
		{"1.5d", 0, false},
		{"-1d", 0, false},
		{"-1h", 0, false},
		{"d", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBadDuration) {
			t.Errorf("ParseDuration(%q) error %v does not match ErrBadDuration", tt.in, err)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{1234 * time.Microsecond, "1ms"},
		{4230 * time.Millisecond, "4.2s"},
		{95 * time.Second, "1m35s"},
		{2 * time.Hour, "2h"},
		{90 * time.Minute, "1h30m"},
		{2*time.Hour + 5*time.Second, "2h0m5s"},
		{24 * time.Hour, "1d"},
		{14 * Day, "14d"},
		{-time.Minute, "-1m"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// What it writes, ParseDuration reads back.
	for _, d := range []time.Duration{time.Hour, 36 * time.Hour, 14 * Day, 95 * time.Second} {
		if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("round trip of %v: %v, %v", d, back, err)
		}
	}
}

func TestParseBefore(t *testing.T) {
	now := time.Date(2024, 5, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2024-05-01T08:30:00Z", time.Date(2024, 5, 1, 8, 30, 0, 0, time.UTC), true},
		{"2024-05-01T08:30:00.5+02:00", time.Date(2024, 5, 1, 6, 30, 0, 5e8, time.UTC), true},
		{"2024-05-01", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), true},
		{"24h", now.Add(-24 * time.Hour), true},
		{"7d", now.Add(-7 * Day), true},
		{"0s", time.Time{}, false},
		{"-1h", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"2024-13-01", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := ParseBefore(tt.in, now)
		if (err == nil) != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseBefore(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	b := &Before{Now: func() time.Time { return now }}
	if !b.Time().IsZero() || b.Type() != "time" {
		t.Fatal("an unset Before is not zero")
	}
	if err := b.Set("2h"); err != nil || !b.Time().Equal(now.Add(-2*time.Hour)) || b.String() != "2h" {
		t.Fatalf("Set(2h): %v, %v", b.Time(), err)
	}
	if err := b.Set("never"); err == nil || b.String() != "2h" {
		t.Fatalf("Set(never) = %v, value %q", err, b.String())
	}
}

func TestParseIDs(t *testing.T) {
	a, b := reliar.NewMessageID(), reliar.NewMessageID()
	ids, err := ParseIDs([]string{a.String(), b.String(), a.String()})
	if err != nil || len(ids) != 2 || ids[0] != a || ids[1] != b {
		t.Fatalf("ParseIDs = %v, %v", ids, err)
	}
	for _, bad := range []string{"x", "00000000-0000-0000-0000-000000000000", a.String() + "0"} {
		if _, err := ParseIDs([]string{a.String(), bad}); !errors.Is(err, ErrBadID) {
			t.Errorf("ParseIDs(%q) error %v, want ErrBadID", bad, err)
		}
	}
}

func TestTableAndClip(t *testing.T) {
	lines := Table([][]string{{"A", "BB", "C"}, {"ééé", "b", ""}, {"x"}}, 2)
	want := []string{"A    BB  C", "ééé  b", "x"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("Table = %q, want %q", lines, want)
	}
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"two\nlines  here", 20, "two lines here"},
		{"abcdefghij", 5, "abcd…"},
		{"ééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestConfirm(t *testing.T) {
	tests := []struct {
		in   io.Reader
		want bool
		err  bool
	}{
		{strings.NewReader("y\n"), true, false},
		{strings.NewReader(" YES \n"), true, false},
		{strings.NewReader("yes"), true, false},
		{strings.NewReader("n\n"), false, false},
		{strings.NewReader("\n"), false, false},
		{strings.NewReader(""), false, false},
		{strings.NewReader("yess\n"), false, false},
		{iotest.ErrReader(errors.New("tty gone")), false, true},
	}
	for i, tt := range tests {
		var out bytes.Buffer
		got, err := Confirm(tt.in, &out, "Retry 3 dead rows?")
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("case %d: Confirm = %v, %v; want %v, error %v", i, got, err, tt.want, tt.err)
		}
		if out.String() != "Retry 3 dead rows? [y/N] " {
			t.Errorf("case %d: prompt %q", i, out.String())
		}
	}
}

// testMessage is the body of the messages enqueued into memstore.
type testMessage struct{ Type string }

func (m testMessage) MessageType() string { return m.Type }

// deadStore returns a memstore holding n dead rows of type typ and one
// pending row, and the dead rows' ids in sequence order.
func deadStore(t *testing.T, n int, typ string) (*memstore.Store, []reliar.MessageID) {
	t.Helper()
	ctx := context.Background()
	s := newMemStore()
	msgs := make([]reliar.Outgoing, n+1)
	for i := range msgs {
		msgs[i] = reliar.NewMsg(testMessage{Type: typ})
	}
	ids, err := s.Enqueue(ctx, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: n, Lease: time.Minute})
	if err != nil || len(batch.Records) != n {
		t.Fatalf("acquire: %d records, %v", len(batch.Records), err)
	}
	fails := make([]outboxdriver.FailedOutcome, n)
	for i, r := range batch.Records {
		fails[i] = outboxdriver.FailedOutcome{Lease: r.Lease(), Error: "no", DeadReason: outbox.DeadPermanent}
	}
	if _, err := s.Fail(ctx, fails); err != nil {
		t.Fatal(err)
	}
	return s, ids[:n]
}

func TestApplyIDs(t *testing.T) {
	ctx := context.Background()
	s, ids := deadStore(t, IDBatch+5, "a")
	asked := append(append([]reliar.MessageID{}, ids...), reliar.NewMessageID())
	tally, err := ApplyIDs(ctx, s, Retry, asked)
	if err != nil || tally != (Tally{Asked: IDBatch + 6, Done: IDBatch + 5, Batches: 2}) {
		t.Fatalf("retry: %+v, %v", tally, err)
	}
	tally, err = ApplyIDs(ctx, s, Delete, ids[:3])
	if err != nil || tally.Done != 0 {
		t.Fatalf("purge of retried rows: %+v, %v; want 0 done", tally, err)
	}
}

func TestApplyMatching(t *testing.T) {
	ctx := context.Background()
	s, _ := deadStore(t, 7, "a")
	var pages []Tally
	tally, err := ApplyMatching(ctx, s, Delete, outbox.DeadQuery{MessageType: "a", Limit: 3}, func(t Tally) { pages = append(pages, t) })
	if err != nil || tally != (Tally{Asked: 7, Done: 7, Batches: 3}) || len(pages) != 3 {
		t.Fatalf("purge: %+v, %v, pages %v", tally, err, pages)
	}
	st, err := s.Stats(ctx)
	if err != nil || st.Dead != 0 || st.Pending != 1 {
		t.Fatalf("stats after: %+v, %v", st, err)
	}
	tally, err = ApplyMatching(ctx, s, Retry, outbox.DeadQuery{}, nil)
	if err != nil || tally != (Tally{}) {
		t.Fatalf("nothing to retry: %+v, %v", tally, err)
	}
}

// failingStore fails the n-th call of ListDead, RetryDead or PurgeDead, or
// returns a cursor that goes backwards.
type failingStore struct {
	*memstore.Store
	failAt, calls int
	backwards     bool
}

var errBroken = errors.New("connection lost")

func (f *failingStore) call() error {
	f.calls++
	if f.calls == f.failAt {
		return errBroken
	}
	return nil
}

func (f *failingStore) ListDead(ctx context.Context, q outbox.DeadQuery) (outbox.DeadLetterPage, error) {
	if err := f.call(); err != nil {
		return outbox.DeadLetterPage{}, err
	}
	p, err := f.Store.ListDead(ctx, q)
	if f.backwards && p.NextAfterSequence != nil {
		zero := int64(0)
		p.NextAfterSequence = &zero
	}
	return p, err
}

func (f *failingStore) RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if err := f.call(); err != nil {
		return 0, err
	}
	return f.Store.RetryDead(ctx, ids)
}

func (f *failingStore) PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error) {
	if err := f.call(); err != nil {
		return 0, err
	}
	return f.Store.PurgeDead(ctx, ids)
}

func (f *failingStore) Purge(ctx context.Context, req outboxdriver.PurgeRequest) (outbox.PurgeReport, error) {
	if err := f.call(); err != nil {
		return outbox.PurgeReport{}, err
	}
	return f.Store.Purge(ctx, req)
}

func TestApplyFailures(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		failAt    int
		backwards bool
		done      int64
		want      string
	}{
		{"first list", 1, false, 0, "list dead rows after 0 retried"},
		{"first retry", 2, false, 0, "retry dead rows after 0 retried"},
		{"second list", 3, false, 2, "list dead rows after 2 retried"},
		{"cursor backwards", 0, true, 2, "cursor went from 0 back to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := deadStore(t, 5, "a")
			f := &failingStore{Store: s, failAt: tt.failAt, backwards: tt.backwards}
			tally, err := ApplyMatching(ctx, f, Retry, outbox.DeadQuery{Limit: 2}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || tally.Done != tt.done {
				t.Fatalf("tally %+v, error %v; want %d done and %q", tally, err, tt.done, tt.want)
			}
			if !tt.backwards && !errors.Is(err, errBroken) {
				t.Fatalf("error %v does not wrap the store's", err)
			}
		})
	}
	s, ids := deadStore(t, 3, "a")
	if _, err := ApplyIDs(ctx, &failingStore{Store: s, failAt: 1}, Delete, ids); !errors.Is(err, errBroken) || !strings.Contains(err.Error(), "purge dead rows after 0 purged") {
		t.Fatalf("ApplyIDs error %v", err)
	}
}

func TestPurge(t *testing.T) {
	ctx := context.Background()
	s, _ := deadStore(t, 5, "a")
	zero := time.Duration(0)
	s.Advance(time.Second)
	req := outboxdriver.PurgeRequest{PublishedRetention: &zero, DeadRetention: &zero, BatchSize: 2}
	tally, err := Purge(ctx, s, req, false, nil)
	if err != nil || tally != (PurgeTally{Passes: 1, DeadDeleted: 2}) {
		t.Fatalf("one pass: %+v, %v", tally, err)
	}
	var passes []PurgeTally
	tally, err = Purge(ctx, s, req, true, func(p PurgeTally) { passes = append(passes, p) })
	if err != nil || tally != (PurgeTally{Passes: 2, DeadDeleted: 3}) || len(passes) != 2 {
		t.Fatalf("loop: %+v, %v, %v", tally, err, passes)
	}
	if _, err := Purge(ctx, s, outboxdriver.PurgeRequest{}, false, nil); err == nil {
		t.Fatal("a zero batch size passed")
	}
	if _, err := Purge(ctx, &failingStore{Store: s, failAt: 1}, req, true, nil); !errors.Is(err, errBroken) {
		t.Fatalf("error %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Purge(cancelled, s, req, true, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestDocuments(t *testing.T) {
	seq := int64(9)
	id := reliar.NewMessageID()
	at := time.Date(2024, 5, 1, 8, 0, 0, 0, time.FixedZone("x", 3600))
	page := outbox.DeadLetterPage{
		Records: []outbox.DeadRecord{{
			Envelope:   reliar.SerializedEnvelope{ID: id, Sequence: 7, MessageType: "orders.placed", Metadata: reliar.Metadata{TenantID: "acme"}},
			DeadReason: outbox.DeadMaxAttempts, DeadAt: at, Attempts: 5, LastError: "timeout\nafter 5s",
		}},
		Poisoned:          []outboxdriver.PoisonedRecord{{ID: id, Sequence: 9, Error: "bad metadata"}},
		NextAfterSequence: &seq,
	}
	b, err := json.Marshal(NewDeadListDocument(page))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"records":[{"id":"` + id.String() + `","sequence":7,"message_type":"orders.placed","tenant_id":"acme","dead_reason":"max_attempts","attempts":5,"last_error":"timeout\nafter 5s","dead_at":"2024-05-01T07:00:00Z","payload_size":0}],"poisoned":[{"id":"` + id.String() + `","sequence":9,"error":"bad metadata"}],"next_after_sequence":9}`
	if string(b) != want {
		t.Fatalf("document\n%s\nwant\n%s", b, want)
	}
	b, _ = json.Marshal(NewDeadListDocument(outbox.DeadLetterPage{}))
	if string(b) != `{"records":[],"poisoned":[],"next_after_sequence":null}` {
		t.Fatalf("empty document %s", b)
	}
	lines := DeadTable(page)
	if len(lines) != 5 || !strings.Contains(lines[1], "timeout after 5s") || lines[2] != "" || !strings.HasPrefix(lines[3], "SEQUENCE  ID") {
		t.Fatalf("table %q", lines)
	}
	if got := DeadListSummary(page); got != "dead list: 1 records, 1 poisoned; more after sequence 9 (--after 9)" {
		t.Fatalf("summary %q", got)
	}
	if DeadTable(outbox.DeadLetterPage{}) != nil {
		t.Fatal("an empty page has a table")
	}

	st := outbox.Stats{Pending: 4, Due: 2, Leased: 1, Scheduled: 1, Dead: 3, OldestDueAge: 1500 * time.Millisecond, AsOf: at}
	b, _ = json.Marshal(NewStatsDocument(st))
	if string(b) != `{"pending":4,"due":2,"leased":1,"scheduled":1,"dead":3,"expired_pending":0,"oldest_due_age_seconds":1.5,"as_of":"2024-05-01T07:00:00Z","tenants":null}` {
		t.Fatalf("stats document %s", b)
	}
	if got := StatsSummary(st); got != "stats: pending=4 due=2 leased=1 scheduled=1 expired_pending=0 dead=3 oldest_due_age=1.5s" {
		t.Fatalf("stats summary %q", got)
	}
	if tab := StatsTable(st, 0); len(tab) != 8 || !strings.HasPrefix(tab[1], "due              2") {
		t.Fatalf("stats table %q", tab)
	}
	// A row waiting 90 s reads as 1m30s in the summary and the table.
	st.OldestDueAge = 90 * time.Second
	if got := StatsSummary(st); !strings.HasSuffix(got, " oldest_due_age=1m30s") {
		t.Fatalf("stats summary %q, want oldest_due_age=1m30s", got)
	}
	if tab := StatsTable(st, 0); !strings.HasPrefix(tab[len(tab)-1], "oldest due row waiting 1m30s, as of") {
		t.Fatalf("stats table %q, want the oldest due row waiting 1m30s", tab)
	}
	if tab := StatsTable(st, 7); !strings.HasPrefix(tab[1], "due              2     claimable now, except 7 of them by a per-key claim") {
		t.Fatalf("stats table with rows a per-key claim cannot take %q", tab)
	}
	if Retry.String() != "retry" || Delete.String() != "purge" || Retry.Past() != "retried" || Delete.Past() != "purged" {
		t.Fatal("action names")
	}
}

// newMemStore returns an empty memstore.Store; memstore.New fails only on an
// invalid option.
func newMemStore(opts ...memstore.Option) *memstore.Store {
	s, err := memstore.New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}
