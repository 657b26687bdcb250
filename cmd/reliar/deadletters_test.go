package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sizes of the dead rows of the memory tests: every row holds a payload of
// hugePayload bytes, and metadata, headers and last_error of hugeDoc each,
// written with plain SQL as another language would.
const (
	hugeRows    = 20
	hugePayload = 25 << 20
	hugeDoc     = 2 << 20
	// rssBudget is the most memory the commands may reach over rows that
	// hold twenty times as much: a listing reads no payload and caps the
	// rest in its SQL. It leaves room for the race detector's overhead.
	rssBudget = 200 << 20
)

// insertHugeDead writes hugeRows dead rows with plain SQL and returns their
// ids in sequence order.
func (e *pgEnv) insertHugeDead(t *testing.T) []string {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), `INSERT INTO `+e.table()+`
		(id, message_type, payload, metadata, headers, metadata_version, dead_at, dead_reason, last_error, tenant_id)
		SELECT gen_random_uuid(), 'huge', convert_to(repeat('p', $1), 'UTF8'),
		       jsonb_build_object('routing', jsonb_build_object('source', repeat('m', $2))),
		       jsonb_build_object('big', repeat('h', $2)), 1,
		       now() - interval '1 hour', 'permanent', repeat('e', $2), 'acme'
		FROM generate_series(1, $3)
		RETURNING id::text`, hugePayload, hugeDoc, hugeRows)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// peakRSS runs the command and returns its result and its peak resident
// memory in bytes.
func peakRSS(t *testing.T, args ...string) (run, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"HOME=" + t.TempDir()}
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exitErr, ok := err.(*exec.ExitError); ok {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return run{code: code, stdout: stdout.String(), stderr: stderr.String()}, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// TestDeadListMemoryBounded lists 20 dead rows holding 31 MiB each: the
// command's memory stays far below what the rows hold, the payload is never
// read, and last_error is cut.
func TestDeadListMemoryBounded(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	ids := db.insertHugeDead(t)
	r, rss := peakRSS(t, "dead", "list", "--database-url", postgresURL, "--schema", db.schema, "--limit", "20", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Records []struct {
			ID          string `json:"id"`
			LastError   string `json:"last_error"`
			PayloadSize int    `json:"payload_size"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if len(doc.Records) != hugeRows || doc.Records[0].ID != ids[0] || doc.Records[0].PayloadSize != hugePayload || len(doc.Records[0].LastError) > 2<<10 {
		t.Fatalf("%d records, first %+v", len(doc.Records), doc.Records[0])
	}
	t.Logf("dead list --limit 20 over %d rows of %d MiB: peak RSS %d MiB", hugeRows, (hugePayload+3*hugeDoc)>>20, rss>>20)
	if rss > rssBudget {
		t.Errorf("dead list reached %d MiB of memory", rss>>20)
	}
}

// TestDeadShowCapped shows the beginning of one huge payload, and says it
// was cut; a row that is not dead exits 1.
func TestDeadShowCapped(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	ids := db.insertHugeDead(t)
	r, rss := peakRSS(t, "dead", "show", "--database-url", postgresURL, "--schema", db.schema, "--max-bytes", "1000", ids[3])
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := "dead show: " + ids[3] + " sequence=4 type=huge content_type=application/json size=" + strconv.Itoa(hugePayload) + " shown=1000 cut encoding=utf-8"
	if r.code != 0 || len(lines) != 2 || lines[0] != strings.Repeat("p", 1000) || lines[1] != want {
		t.Fatalf("exit %d, stdout %.200q, stderr %q; want 1000 bytes then %q", r.code, r.stdout, r.stderr, want)
	}
	if rss > rssBudget {
		t.Errorf("dead show reached %d MiB of memory", rss>>20)
	}
	pending := db.insert(t, "order_placed", 1)[0]
	r, _ = peakRSS(t, "dead", "show", "--database-url", postgresURL, "--schema", db.schema, pending)
	if r.code != 1 || !strings.Contains(r.stderr, "not a dead row") {
		t.Fatalf("a pending row: exit %d, stderr %q", r.code, r.stderr)
	}
	r, _ = peakRSS(t, "dead", "show", "--database-url", postgresURL, "--schema", db.schema, "--max-bytes", "99999999", pending)
	if r.code != 2 || !strings.Contains(r.stderr, "--max-bytes") {
		t.Fatalf("--max-bytes over the cap: exit %d, stderr %q", r.code, r.stderr)
	}
}

// listening is serve's log line naming its address.
var listening = regexp.MustCompile(`msg="admin page listening" url=(http://\S+/)`)

// TestServeMemoryBounded loads the admin page three times and one payload
// over 20 dead rows of 31 MiB each: serve's memory stays far below them.
func TestServeMemoryBounded(t *testing.T) {
	t.Parallel()
	db := newPG(t)
	db.migrate(t)
	ids := db.insertHugeDead(t)
	const token = "serve-memory-token-0123456789"
	cmd := exec.Command(binary, "serve", "--database-url", postgresURL, "--schema", db.schema, "--addr", "127.0.0.1:0")
	cmd.Env = []string{"HOME=" + t.TempDir(), "RELIAR_TOKEN=" + token}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	var base string
	waitFor(t, "serve to listen", func() bool {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	req, _ := http.NewRequest(http.MethodPost, base+"login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", strings.TrimSuffix(base, "/"))
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for range 3 {
		res, err := client.Get(base)
		if err != nil {
			t.Fatal(err)
		}
		body := new(strings.Builder)
		_, _ = ioCopy(body, res)
		if res.StatusCode != http.StatusOK || !strings.Contains(body.String(), ids[0]) {
			t.Fatalf("dashboard: status %d", res.StatusCode)
		}
	}
	res, err = client.Get(base + "api/dead/" + ids[0] + "/payload?seq=1")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Size  int  `json:"size"`
		Shown int  `json:"shown"`
		Cut   bool `json:"cut"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil || res.StatusCode != http.StatusOK || doc.Size != hugePayload || !doc.Cut || doc.Shown != 64<<10 {
		t.Fatalf("payload: status %d, %+v, %v", res.StatusCode, doc, err)
	}
	res.Body.Close()
	rss := vmHWM(t, cmd.Process.Pid)
	t.Logf("serve, three page loads and a payload over %d rows of %d MiB: peak RSS %d MiB", hugeRows, (hugePayload+3*hugeDoc)>>20, rss>>20)
	if rss > rssBudget {
		t.Errorf("serve reached %d MiB of memory", rss>>20)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	done <- nil
}

// vmHWM reads the peak resident memory of a running process, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// ioCopy reads an answer's body into w and closes it.
func ioCopy(w *strings.Builder, res *http.Response) (int64, error) {
	defer res.Body.Close()
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := res.Body.Read(buf)
		w.Write(buf[:k])
		n += int64(k)
		if err != nil {
			return n, nil
		}
	}
}
