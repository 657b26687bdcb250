package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/store/pgstore"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine a run started
// outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr error
		check   func(t *testing.T, c config)
	}{
		{"full defaults", nil, nil, func(t *testing.T, c config) {
			if c.quick || c.backlog != 100000 || c.rate != 20 || c.tenants != 10000 || c.perTenant != 3 || c.reps != 1 || c.idleMessages != 200 || c.runTimeout != 3*time.Minute {
				t.Errorf("%+v", c)
			}
		}},
		{"quick defaults", []string{"-quick"}, nil, func(t *testing.T, c config) {
			if !c.quick || c.backlog != 10000 || c.tenants != 1000 || c.idleMessages != 40 || c.runTimeout != 30*time.Second {
				t.Errorf("%+v", c)
			}
		}},
		{"quick with sizes", []string{"-quick", "-backlog", "500", "-tenants", "7", "-rate", "50"}, nil, func(t *testing.T, c config) {
			if c.backlog != 500 || c.tenants != 7 || c.rate != 50 {
				t.Errorf("%+v", c)
			}
		}},
		{"negative rate", []string{"-rate", "-1"}, errUsage, nil},
		{"zero reps", []string{"-reps", "0"}, errUsage, nil},
		{"unknown flag", []string{"-fast"}, errUsage, nil},
		{"stray argument", []string{"now"}, errUsage, nil},
		{"help", []string{"-h"}, flag.ErrHelp, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestTenantPublisher(t *testing.T) {
	big, small := sink.New(1), sink.New(1)
	p := tenantPublisher{bigTenant: {Sink: big}, smallTenant: {Sink: small}}
	env := func(tenant string) *reliar.SerializedEnvelope {
		return &reliar.SerializedEnvelope{Payload: payload.New(0, 1).Encode(), Metadata: reliar.Metadata{TenantID: tenant}}
	}
	if err := p.Publish(t.Context(), env(smallTenant)); err != nil {
		t.Fatal(err)
	}
	if !small.Has(0) || big.Has(0) {
		t.Fatal("the small tenant's message did not reach the small sink alone")
	}
	if err := p.Publish(t.Context(), env("other")); !reliar.IsPermanent(err) {
		t.Fatalf("a message of an unknown tenant: %v, want a permanent failure", err)
	}
}

func TestLastLine(t *testing.T) {
	fair := &series{p99: []float64{10}, idleP99: []float64{4}, drainRate: []float64{900}, claimUs: []float64{30}}
	unfair := &series{p99: []float64{2000}, drainRate: []float64{1000}, claimUs: []float64{20}}
	want := "fairness: small_p99_tenant_ms=10.00 small_p99_unfair_ms=2000.00 small_p99_idle_ms=4.00 p99_ratio_vs_idle=2.50 drain_ratio=0.90 claim_cost_ratio=1.50"
	if got := lastLine(compute(fair, unfair)); got != want {
		t.Fatalf("last line\n%s\nwant\n%s", got, want)
	}
	if got := lastLine(compute(&series{}, unfair)); !strings.Contains(got, "small_p99_tenant_ms=nan") {
		t.Fatalf("no figure: %s", got)
	}
	if !math.IsNaN(med(nil)) {
		t.Fatal("the median of no values is a figure")
	}
}

// TestFillBacklog checks that every backlog row the plain SQL writes
// belongs to the big tenant and carries a payload the sink reads, numbered
// from 0.
func TestFillBacklog(t *testing.T) {
	ctx := t.Context()
	env, drop, err := pgenv.Fresh(ctx, pgenv.DefaultDSN, "fairness fill")
	if err != nil {
		t.Fatal(err)
	}
	defer drop(context.WithoutCancel(ctx))
	pool, err := env.Pool(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema)); err != nil {
		t.Fatal(err)
	}
	if err := fillBacklog(ctx, pool, 3); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT tenant_id, payload FROM outbox ORDER BY sequence`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var tenant string
		var b []byte
		if err := rows.Scan(&tenant, &b); err != nil {
			t.Fatal(err)
		}
		seq, _, err := payload.Decode(b)
		if err != nil || seq != n || tenant != bigTenant {
			t.Fatalf("row %d: tenant %q, payload %q: seq %d, %v", n, tenant, b, seq, err)
		}
		n++
	}
	if rows.Err() != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, rows.Err())
	}
}

// lineRE matches the last line.
var lineRE = regexp.MustCompile(`^fairness: small_p99_tenant_ms=[0-9.]+ small_p99_unfair_ms=[0-9.]+ small_p99_idle_ms=[0-9.]+ p99_ratio_vs_idle=[0-9.]+ drain_ratio=[0-9.]+ claim_cost_ratio=[0-9.]+$`)

// TestQuickRun runs a miniature measurement end to end against the local
// PostgreSQL: the table and the last line, every figure present.
func TestQuickRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-quick", "-backlog", "3000", "-rate", "50", "-idle-messages", "5", "-tenants", "300", "-run-timeout", "60s"}
	if err := run(t.Context(), args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !lineRE.MatchString(last) {
		t.Fatalf("last line %q\nstdout:\n%s", last, stdout.String())
	}
	for _, want := range []string{"| small tenant behind the backlog: commit → publish p99 |", "| big tenant: drain of 3000 rows |",
		"| claim cost, 300 tenants × 3 rows |", "| duplicates | 0 | 0 | – |"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestRunUsageError(t *testing.T) {
	if err := run(context.Background(), []string{"-reps", "x"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Fatalf("error = %v, want errUsage", err)
	}
}
