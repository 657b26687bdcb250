package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/reliar/reliar/publisher/webhook"
)

// TestRelayKeepsNoByteOfAnEchoingReceiversAnswer runs the built relay
// against a webhook receiver that echoes the request (payload, header
// values, the signature) in its error answers: a 500, whose failure is
// retried, then a 400 that makes the row dead, sent with a reason phrase
// of its own that echoes the payload too. The relay's log lines and the
// row's last_error name each status code, and no byte of the answer: none
// of the payload's, header's or signature's distinctive bytes.
func TestRelayKeepsNoByteOfAnEchoingReceiversAnswer(t *testing.T) {
	t.Parallel()
	const (
		payloadCanary = "payload-canary-7f3a"
		cardNumber    = "4111-1111-1111-1111"
		headerCanary  = "header-canary-9b2c"
	)
	secret := webhook.NewSecret()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var echo strings.Builder
		for k, vs := range r.Header {
			fmt.Fprintf(&echo, "%s: %s\n", k, strings.Join(vs, ","))
		}
		echo.Write(body)
		if hits.Add(1) == 1 {
			w.Header().Set("X-Echo", r.Header.Get("X-Api-Secret")+" "+string(body))
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, echo.String())
			return
		}
		// The second answer is written by hand, so that its reason phrase
		// can carry the payload too.
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		writeRaw(buf, "HTTP/1.1 400 rejected "+strings.ReplaceAll(string(body), "\n", " ")+"\r\n"+
			"Content-Type: text/plain\r\n"+
			fmt.Sprintf("Content-Length: %d\r\n", echo.Len())+
			"Connection: close\r\n\r\n"+echo.String())
	}))
	defer srv.Close()

	db := newPG(t)
	db.migrate(t)
	var id string
	if err := db.pool.QueryRow(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, headers)
		VALUES (gen_random_uuid(), 'order_placed', convert_to($1, 'UTF8'), jsonb_build_object('x-api-secret', $2::text))
		RETURNING id::text`, `{"card":"`+cardNumber+`","note":"`+payloadCanary+`"}`, headerCanary).Scan(&id); err != nil {
		t.Fatalf("insert: %v", err)
	}
	p := startRelayEnv(t, []string{"RELIAR_WEBHOOK_SECRET=" + secret}, append([]string{"--database-url", postgresURL,
		"--schema", db.schema, "--broker", srv.URL + "/hooks/orders"}, fastFlags...)...)

	lastError := func() string {
		var s *string
		if err := db.pool.QueryRow(t.Context(), `SELECT last_error FROM `+db.table()+` WHERE id = $1`, id).Scan(&s); err != nil {
			t.Fatalf("read last_error: %v", err)
		}
		if s == nil {
			return ""
		}
		return *s
	}
	leaks := []string{payloadCanary, cardNumber, "4111", headerCanary, "canary", "rejected",
		strings.TrimPrefix(secret, "whsec_"), "v1,", "X-Api-Secret", "Webhook-Signature"}
	check := func(where, text string) {
		t.Helper()
		for _, leak := range leaks {
			if strings.Contains(text, leak) {
				t.Errorf("%s carries %q from the receiver's answer:\n%s", where, leak, text)
			}
		}
	}

	// The 500: a transient failure, retried; last_error names the status.
	waitFor(t, "the 500 recorded", func() bool { return strings.Contains(lastError(), "500") })
	first := lastError()
	if want := "receiver answered 500 Internal Server Error"; !strings.Contains(first, want) {
		t.Errorf("last_error %q after the 500, want it to contain %q", first, want)
	}
	check("last_error after the 500", first)

	// The 400: a permanent failure, the row dead.
	waitFor(t, "the row dead", func() bool { return db.count(t, "dead_at IS NOT NULL") == 1 })
	second := lastError()
	if want := "receiver answered 400 Bad Request"; !strings.Contains(second, want) {
		t.Errorf("last_error %q after the 400, want it to contain %q", second, want)
	}
	check("last_error after the 400", second)
	if n := hits.Load(); n != 2 {
		t.Errorf("the receiver was called %d times, want 2", n)
	}

	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
	stderr := p.stderr.String()
	check("stderr", stderr)
	var retried, dead bool
	for line := range strings.SplitSeq(stderr, "\n") {
		retried = retried || strings.Contains(line, "publish failed; will retry") && strings.Contains(line, "500 Internal Server Error")
		dead = dead || strings.Contains(line, "level=WARN") && strings.Contains(line, "publish failed; moving to dead") && strings.Contains(line, "400 Bad Request")
	}
	if !retried || !dead {
		t.Errorf("stderr has no line for the retried 500 (%v) or no WARN line for the dead 400 (%v):\n%s", retried, dead, stderr)
	}
}

// writeRaw writes s to a hijacked connection's buffer and flushes it.
func writeRaw(buf *bufio.ReadWriter, s string) {
	_, _ = buf.WriteString(s)
	_ = buf.Flush()
}
