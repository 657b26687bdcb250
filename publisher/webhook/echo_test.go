package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reliar/reliar/publisher/publishertest"
)

// A receiver that echoes the request (body and header values) in its
// error answers must not get any of it into the publisher's error, which
// the relay logs and stores as the row's last_error: only the status code
// and reason phrase are kept.
func TestErrorKeepsNoByteOfTheAnswer(t *testing.T) {
	for _, status := range []int{400, 404, 413, 422, 500, 503} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				w.WriteHeader(status)
				for k, vs := range r.Header {
					fmt.Fprintf(w, "%s: %s\n", k, strings.Join(vs, ","))
				}
				_, _ = w.Write(body)
			})
			env := publishertest.Envelope(1)
			env.Payload = []byte(`{"card":"4111-1111-1111-1111"}`)
			env.Headers["x-secret"] = "s3cr3t-header-value"
			err := newPublisher(t, s.URL).Publish(t.Context(), env)
			if err == nil {
				t.Fatal("Publish succeeded on an error answer")
			}
			want := fmt.Sprintf("webhook: publish %s: webhook: receiver answered %d %s", env.ID, status, http.StatusText(status))
			for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%v", err)} {
				if text != want {
					t.Errorf("error text %q, want exactly %q", text, want)
				}
				for _, leak := range []string{"4111", "s3cr3t", env.Metadata.Correlation.CorrelationID, "webhook-signature"} {
					if strings.Contains(text, leak) {
						t.Errorf("error text %q carries %q from the echoed request", text, leak)
					}
				}
			}
		})
	}
}
