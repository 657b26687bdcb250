package admin

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/reliar/reliar"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// screenshotEnv, set to 1, makes TestBrowser write the screenshot to
// docs/admin.png of the repository instead of a temporary folder.
const screenshotEnv = "RELIAR_UPDATE_SCREENSHOT"

// newBrowser starts a headless Chromium with a fresh profile, closed after
// the test, and returns a tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser test needs headless Chromium at %s: install Debian's chromium package (apt-get install -y chromium; make test does it): %v", chromiumPath, err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// acceptDialogs accepts every confirm() the page opens, in a goroutine
// that the returned func stops and waits for; it returns the messages seen.
func acceptDialogs(t *testing.T, ctx context.Context) (messages func() []string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	wg.Go(func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, ev.Message)
			mu.Unlock()
			if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
		}
	})
	messages = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
	return messages, func() { cancel(); wg.Wait() }
}

// illustrate fills the chart's history with an hour of samples (a burst
// that drained, and dead letters that piled up, the relay publishing
// about 450 rows a minute and faster while it drained the burst) ending
// at the store's present counts, so that the screenshot shows what an
// operator sees.
func illustrate(t *testing.T, s *testServer, o *pgOutbox) {
	t.Helper()
	st := o.stats(t)
	for i := 0; i <= 60; i++ {
		f := float64(i)
		pending := int64(30 + 1400*math.Exp(-math.Pow((f-22)/7, 2)) + 350*math.Exp(-math.Pow((f-47)/4, 2)))
		dead := min(st.Dead, int64(i/12))
		if i == 60 {
			pending, dead = st.Pending, st.Dead
		}
		smp := sample{At: st.AsOf.Add(-time.Duration(60-i) * time.Minute), Pending: pending, Dead: dead}
		if i > 0 {
			smp.Published, smp.HasPublished = int64(450+600*math.Exp(-math.Pow((f-30)/6, 2))), true
		}
		s.srv.history.add(smp)
	}
}

// TestBrowser drives the admin page in headless Chromium: log in, read the
// counts, filter the dead letters, retry one, purge a selection, show a
// payload, and take a screenshot.
func TestBrowser(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t,
		deadSpec{typ: "orders.placed", tenant: "acme", note: "order 1", err: "nats: no responders available for request"},
		deadSpec{typ: "orders.placed", tenant: "acme", note: "order 2", err: "kafka: MESSAGE_TOO_LARGE: the message is larger than the topic's max.message.bytes"},
		deadSpec{typ: "orders.placed", tenant: "globex", note: "order 3", err: "webhook: 422 Unprocessable Entity: {\"error\":\"unknown customer\"}"},
		deadSpec{typ: "invoice.issued", tenant: "acme", note: "invoice 1", err: "amqp: NO_ROUTE: exchange billing has no queue bound for invoice.issued"},
		deadSpec{typ: "invoice.issued", tenant: "globex", note: "invoice 2", err: "publisher panicked: runtime error: invalid memory address or nil pointer dereference"},
	)
	o.seedScheduled(t, 2)
	due := make([]reliar.Outgoing, 3)
	for i := range due {
		due[i] = reliar.NewMsg(testMsg{Type: "orders.placed", Note: "due"})
	}
	o.enqueue(t, due...)
	s := newTestServer(t, o.store, false)
	s.srv.cfg.Published = publishedCounter(o)
	illustrate(t, s, o)

	ctx := newBrowser(t)
	messages, stopDialogs := acceptDialogs(t, ctx)
	defer stopDialogs()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	rows := func() int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#dead-table tbody tr[data-id]").length`))
		if err != nil {
			t.Fatalf("count rows: %v", err)
		}
		return n
	}
	// waitFor waits until a predicate holds on the page, across the
	// navigation a form submission starts.
	waitFor := func(what, predicate string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.readyState === "complete" && (`+predicate+`)`,
				chromedp.WithPollingTimeout(2*time.Second)))
			if err == nil {
				return
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFlash := func(want string) {
		t.Helper()
		waitFor("the message "+want, `!!document.querySelector("#flash") && document.querySelector("#flash").textContent.includes(`+jsString(want)+`)`)
	}

	// Log in: the dashboard redirects to the form.
	do("open the dashboard", chromedp.Navigate(s.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/login") {
		t.Fatalf("not redirected to the login form: %s", loc)
	}
	do("log in", chromedp.SendKeys(chromedp.CSS("#token"), testToken), chromedp.Submit(chromedp.CSS("#token")))
	waitFor("the dashboard", `!!document.querySelector("#counts")`)

	// The counts.
	for sel, want := range map[string]string{"#count-pending": "5", "#count-due": "3", "#count-scheduled": "2", "#count-leased": "0", "#count-expired": "0", "#count-dead": "5"} {
		if got := text(sel); got != want {
			t.Errorf("%s shows %q, want %q", sel, got, want)
		}
	}
	if got := text("#drain"); got == "" || got == "–" {
		t.Errorf("net drain shows %q", got)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg polyline").length`)); n != 4 {
		t.Errorf("%d chart lines, want 4: pending, dead, published, net drain", n)
	}
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('figure[data-chart="published"] .legend').dataset.last`)); v != "450" {
		t.Errorf("the publish chart's latest value is %q, want the 450 rows/min of the last sample", v)
	}
	if n := rows(); n != 5 {
		t.Fatalf("%d dead letters listed, want 5", n)
	}
	if got := text("#selected-count"); got != "0 selected" {
		t.Errorf("selection counter %q", got)
	}
	if disabled, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#purge-selected").disabled`)); !disabled {
		t.Error("purge selected is enabled with nothing selected")
	}
	screenshot(t, ctx)

	// Filter by type.
	do("filter by type",
		chromedp.SetValue(chromedp.CSS("#filter-type"), "orders.placed"),
		chromedp.Click(chromedp.CSS("#filter-apply")))
	waitFor("the filtered page", `new URLSearchParams(location.search).get("type") === "orders.placed" && !!document.querySelector("#dead-table")`)
	if n := rows(); n != 3 {
		t.Fatalf("%d dead letters of type orders.placed listed, want 3", n)
	}

	// Retry one.
	do("retry one", chromedp.Click(chromedp.CSS(`tr[data-id="`+ids[0].String()+`"] button.retry-one`)))
	waitFlash("Retried 1 of 1 dead letter.")
	if n := rows(); n != 2 {
		t.Fatalf("%d rows after retrying one, want 2", n)
	}
	if got := text("#count-due"); got != "4" {
		t.Errorf("due shows %q after a retry, want 4", got)
	}

	// Purge a selection of two.
	do("select two",
		chromedp.Click(chromedp.CSS(`tr[data-id="`+ids[1].String()+`"] input.row-select`)),
		chromedp.Click(chromedp.CSS(`tr[data-id="`+ids[2].String()+`"] input.row-select`)))
	if got := text("#selected-count"); got != "2 selected" {
		t.Errorf("selection counter %q, want 2 selected", got)
	}
	do("purge the selection", chromedp.Click(chromedp.CSS("#purge-selected")))
	waitFlash("Purged 2 of 2 dead letters.")
	if n := rows(); n != 0 {
		t.Fatalf("%d rows after purging the selection, want 0", n)
	}
	if got := messages(); len(got) != 1 || !strings.Contains(got[0], "Purge the selected dead letters?") {
		t.Errorf("confirmations %q", got)
	}

	// Show a payload, on request only.
	do("clear the filter", chromedp.Navigate(s.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#dead-table")))
	if n := rows(); n != 2 {
		t.Fatalf("%d rows without a filter, want 2", n)
	}
	do("show a payload",
		chromedp.Click(chromedp.CSS(`tr[data-id="`+ids[3].String()+`"] a.payload-link`)),
		chromedp.WaitVisible(chromedp.CSS("#payload-dialog")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#payload-body").textContent.includes("invoice 1")`, chromedp.WithPollingTimeout(20*time.Second)))
	if got := text("#payload-meta"); !strings.Contains(got, "invoice.issued") || !strings.Contains(got, "application/json") {
		t.Errorf("payload meta %q", got)
	}
	do("close the payload", chromedp.Click(chromedp.CSS("#payload-close")), chromedp.WaitNotVisible(chromedp.CSS("#payload-dialog")))

	// The table agrees.
	dead := o.deadIDs(t)
	if len(dead) != 2 || !dead[ids[3]] || !dead[ids[4]] {
		t.Fatalf("dead rows after the session: %v", dead)
	}
	if st := o.stats(t); st.Due != 4 {
		t.Fatalf("due %d, want 4", st.Due)
	}
	var audited []string
	for _, r := range withMessage(s.log.records(t), "admin action") {
		audited = append(audited, r["action"].(string)+" "+r["scope"].(string))
	}
	if got := strings.Join(audited, ", "); got != "retry one, purge selection" {
		t.Fatalf("audited %q", got)
	}
}

// screenshot saves the page as a PNG: to docs/admin.png when screenshotEnv
// is 1, else to a temporary folder.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10_000 {
		t.Fatalf("the screenshot is not a PNG of a page (%d bytes)", len(png))
	}
	path := filepath.Join(t.TempDir(), "admin.png")
	if os.Getenv(screenshotEnv) == "1" {
		path = filepath.Join("..", "..", "..", "..", "docs", "admin.png")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
