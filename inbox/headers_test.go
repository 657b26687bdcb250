package inbox_test

import (
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

func TestMessageIDFromHeaders(t *testing.T) {
	id := reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"cloudevents", map[string]string{"ce-id": id.String()}, true},
		{"cloudevents upper case", map[string]string{"Ce-Id": id.String()}, true},
		{"cloudevents kafka", map[string]string{"ce_id": id.String()}, true},
		{"cloudevents amqp", map[string]string{"cloudEvents:id": id.String()}, true},
		{"jetstream", map[string]string{"Nats-Msg-Id": id.String()}, true},
		{"webhook", map[string]string{"webhook-id": id.String()}, true},
		{"amqp", map[string]string{"message-id": id.String()}, true},
		{"none", map[string]string{"x": "y"}, false},
		{"not a uuid", map[string]string{"ce-id": "nope"}, false},
		{"nil uuid", map[string]string{"ce-id": "00000000-0000-0000-0000-000000000000"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inbox.MessageIDFromHeaders(tt.headers)
			if tt.ok != (err == nil) || (tt.ok && got != id) {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}
