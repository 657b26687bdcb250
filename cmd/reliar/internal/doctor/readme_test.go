package doctor

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the doctor sample of README.md from what doctor prints")

// readmeScenario is the table of the README's doctor sample: the pending
// index dropped, a worker crashed holding two rows.
func readmeScenario() Facts {
	f := healthy()
	f.Schema = "shop"
	f.Version, f.WantVersion = pgstore.SchemaVersion, pgstore.SchemaVersion
	f.Indexes = f.Indexes[1:] // outbox_pending_idx dropped
	f.ClaimPlan = Plan{SeqScan: true}
	f.Table = Table{LiveTuples: 43, DeadTuples: 39, TableBytes: 80 << 10, IndexBytes: 96 << 10, RowWidth: 300, PendingIndexBytes: 0}
	f.Lapsed = Lapsed{Count: 2, Oldest: 25 * time.Minute, Workers: []string{"relay-7f9c/2"}}
	f.Stats = outbox.Stats{Pending: 12, Due: 9, Scheduled: 3, OldestDueAge: 3*time.Minute + 53*time.Second, AsOf: time.Now()}
	f.DeadLastHour, f.DeadBefore = 0, 1
	return f
}

// TestREADMEDoctorSample: the doctor sample in README.md is what doctor
// prints for its scenario, the schema version included; run with
// -update-readme to rewrite it after a change to a check.
func TestREADMEDoctorSample(t *testing.T) {
	report := NewReport("postgres", Evaluate(readmeScenario(), Thresholds{}))
	var table []string
	for _, l := range report.Lines() {
		if l == "" {
			break
		}
		table = append(table, strings.TrimRight(l, " "))
	}
	want := append(table, "(… a why/fix block per check that is not ok …)",
		report.Summary()+"          (exit status 1)")

	path := filepath.Join("..", "..", "..", "..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const start = "$ reliar doctor --database-url … --schema shop        # the pending index dropped, a worker crashed\n"
	text := string(data)
	i := strings.Index(text, start)
	if i < 0 {
		t.Fatalf("README.md has no doctor sample starting %q", start)
	}
	body := text[i+len(start):]
	j := strings.Index(body, "\n```")
	if j < 0 {
		t.Fatal("the README's doctor sample does not end")
	}
	got := body[:j]
	if wantText := strings.Join(want, "\n"); got != wantText {
		if *updateREADME {
			text = text[:i+len(start)] + wantText + body[j:]
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's doctor sample drifted from what doctor prints (go test -run TestREADMEDoctorSample -update-readme rewrites it):\n got:\n%s\nwant:\n%s", got, wantText)
	}
}
