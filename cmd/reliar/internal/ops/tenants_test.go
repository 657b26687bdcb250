package ops

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// fakeTenants lists fixed tenants, or fails, and records the limit asked.
type fakeTenants struct {
	stats []outboxdriver.TenantStat
	err   error
	asked int
}

func (f *fakeTenants) TenantStats(_ context.Context, limit int) ([]outboxdriver.TenantStat, error) {
	f.asked = limit
	return f.stats, f.err
}

func TestTenants(t *testing.T) {
	three := []outboxdriver.TenantStat{
		{TenantID: "acme", Due: 1200, OldestDueAge: 90 * time.Second},
		{TenantID: "", Due: 3, OldestDueAge: 1500 * time.Millisecond},
		{TenantID: "globex", Due: 1, OldestDueAge: 0},
	}
	ctx := context.Background()

	f := &fakeTenants{stats: three}
	got, ok, err := Tenants(ctx, f, 10)
	if err != nil || !ok || len(got) != 3 || f.asked != 10 {
		t.Fatalf("Tenants = %v, %v, %v (asked %d); want the three, listed, asked 10", got, ok, err, f.asked)
	}
	// A store that returns more than asked is cut to the limit.
	if got, _, _ := Tenants(ctx, f, 2); len(got) != 2 || got[1].TenantID != "" {
		t.Fatalf("Tenants(2) = %v", got)
	}
	if _, _, _ = Tenants(ctx, f, MaxTenants*5); f.asked != MaxTenants {
		t.Fatalf("asked %d, want at most %d", f.asked, MaxTenants)
	}
	for name, c := range map[string]struct {
		store any
		n     int
	}{"off": {f, -1}, "zero": {f, 0}, "no TenantStats": {struct{}{}, 10}} {
		f.asked = 0
		if got, ok, err := Tenants(ctx, c.store, c.n); got != nil || ok || err != nil || f.asked != 0 {
			t.Errorf("%s: Tenants = %v, %v, %v (asked %d); want nothing read", name, got, ok, err, f.asked)
		}
	}
	boom := errors.New("boom")
	if _, ok, err := Tenants(ctx, &fakeTenants{err: boom}, 10); !ok || !errors.Is(err, boom) || !strings.Contains(err.Error(), "tenants") {
		t.Fatalf("a failing store: %v, %v", ok, err)
	}

	b, _ := json.Marshal(NewTenantDocuments(three[:2]))
	if string(b) != `[{"tenant_id":"acme","due":1200,"oldest_due_age_seconds":90},{"tenant_id":"","due":3,"oldest_due_age_seconds":1.5}]` {
		t.Fatalf("documents %s", b)
	}
	if b, _ := json.Marshal(NewTenantDocuments(nil)); string(b) != `[]` {
		t.Fatalf("no tenants: %s, want []", b)
	}

	want := []string{
		"tenants with due rows, the longest waiting first (at most 10, --tenants):",
		"TENANT  DUE   OLDEST_DUE_AGE",
		"acme    1200  1m30s",
		"-       3     1.5s",
		"globex  1     0s",
	}
	if got := TenantsTable(three, 10); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("table\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := TenantsTable(nil, 10); len(got) != 1 || got[0] != "no tenant has due rows" {
		t.Fatalf("empty table %q", got)
	}
}

func TestTenantLabel(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "-",
		"acme":                  "acme",
		"a b":                   "a b",
		"bad\x1b[2Jid":          `"bad\x1b[2Jid"`,
		"two\nlines":            `"two\nlines"`,
		"\xff":                  `"\xff"`,
		"é-tenant":              "é-tenant",
		strings.Repeat("x", 70): strings.Repeat("x", 63) + "…",
	} {
		if got := TenantLabel(in); got != want {
			t.Errorf("TenantLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
