package sqlitestore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

// drain claims and completes rows with s until a claim comes back empty,
// and returns the ids it claimed.
func drain(ctx context.Context, s *sqlitestore.Store, worker string) ([]string, error) {
	var ids []string
	for {
		b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: worker, BatchSize: 7, Lease: time.Minute})
		if err != nil {
			return ids, err
		}
		if b.Len() == 0 {
			return ids, nil
		}
		leases := make([]outboxdriver.Lease, len(b.Records))
		for i, r := range b.Records {
			ids = append(ids, r.Envelope.ID.String())
			leases[i] = r.Lease()
		}
		n, err := s.Complete(ctx, leases)
		if err != nil {
			return ids, err
		}
		if n != int64(len(leases)) {
			return ids, fmt.Errorf("completed %d of %d fresh leases", n, len(leases))
		}
	}
}

// checkEachOnce checks that the claimed ids are the enqueued ones, each
// claimed exactly once.
func checkEachOnce(t *testing.T, claimed []string, want int) {
	t.Helper()
	slices.Sort(claimed)
	if len(claimed) != want {
		t.Fatalf("%d claims, want %d", len(claimed), want)
	}
	for i := 1; i < len(claimed); i++ {
		if claimed[i] == claimed[i-1] {
			t.Fatalf("row %s claimed twice", claimed[i])
		}
	}
}

// Two handles on one file, two dispatchers each: every row is claimed once.
func TestConcurrentClaimsOnOneFile(t *testing.T) {
	ctx := t.Context()
	db, path := newDB(t)
	const rows = 200
	first, err := sqlitestore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := enqueue(ctx, first, newMsgs(rows)...); err != nil {
		t.Fatal(err)
	}
	second, err := sqlitestore.New(ctx, openDB(t, path))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		claimed []string
		wg      sync.WaitGroup
	)
	errs := make(chan error, 4)
	for i, s := range []*sqlitestore.Store{first, second, first, second} {
		wg.Go(func() {
			ids, err := drain(ctx, s, fmt.Sprintf("worker-%d", i))
			mu.Lock()
			claimed = append(claimed, ids...)
			mu.Unlock()
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkEachOnce(t, claimed, rows)
}

// helperEnv names the database file a helper process drains.
const helperEnv = "SQLITESTORE_HELPER_DB"

// TestHelperProcess is not a test: run by TestProcessesOnOneFile as a child
// process, it drains the database named in its environment and prints the
// ids it claimed, one per line.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		return
	}
	db, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := sqlitestore.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the parent's go, so that the processes claim at once.
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	ids, err := drain(t.Context(), s, fmt.Sprintf("process-%d", os.Getpid()))
	for _, id := range ids {
		fmt.Println("claimed", id)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Several processes on one file: every row is claimed once.
func TestProcessesOnOneFile(t *testing.T) {
	ctx := t.Context()
	db, path := newDB(t)
	s, err := sqlitestore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 600
	if err := enqueue(ctx, s, newMsgs(rows)...); err != nil {
		t.Fatal(err)
	}
	type child struct {
		cmd    *exec.Cmd
		gate   io.WriteCloser
		out    *bufio.Reader
		stderr *strings.Builder
	}
	var children []child
	for range 2 {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		c := child{cmd: cmd, stderr: &strings.Builder{}}
		cmd.Stderr = c.stderr
		if c.gate, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		c.out = bufio.NewReader(stdout)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children = append(children, c)
	}
	// Both processes have the file open before either claims.
	for _, c := range children {
		if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("helper process: %q, %v\n%s", line, err, c.stderr)
		}
	}
	for _, c := range children {
		fmt.Fprintln(c.gate, "go")
		c.gate.Close()
	}
	var claimed []string
	for i, c := range children {
		before := len(claimed)
		sc := bufio.NewScanner(c.out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "claimed "); ok {
				claimed = append(claimed, id)
			}
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v\n%s", err, c.stderr)
		}
		t.Logf("process %d claimed %d rows", i, len(claimed)-before)
	}
	checkEachOnce(t, claimed, rows)
}
