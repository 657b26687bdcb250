package outboxtest_test

import (
	"context"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxtest"
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

type orderCancelled struct {
	OrderID string `json:"order_id"`
}

func (orderCancelled) MessageType() string { return "orders.cancelled" }

// enqueued runs msgs through a FakeEnqueuer, which encodes them as a store
// does, and returns what it recorded.
func enqueued(t *testing.T, msgs ...reliar.Outgoing) []reliar.SerializedEnvelope {
	t.Helper()
	var f outboxtest.FakeEnqueuer[struct{}]
	if _, err := f.Enqueue(context.Background(), struct{}{}, msgs...); err != nil {
		t.Fatal(err)
	}
	return f.Enqueued()
}

func keyed(body reliar.Message, key, tenant string) reliar.Outgoing {
	m := reliar.NewMsg(body)
	m.OrderingKey = key
	m.Metadata.TenantID = tenant
	return m
}

func TestRequireEnqueuedFindsTheOneMatch(t *testing.T) {
	msgs := enqueued(t,
		keyed(orderPlaced{OrderID: "o-1", Total: 10}, "c-1", "acme"),
		keyed(orderPlaced{OrderID: "o-2", Total: 20}, "c-2", "acme"),
		keyed(orderCancelled{OrderID: "o-1"}, "c-1", "acme"),
	)
	for name, opts := range map[string]*outboxtest.RequireOpts{
		"key":     {OrderingKey: "c-2"},
		"tenant":  {TenantID: "acme", OrderingKey: "c-2"},
		"payload": {Payload: outboxtest.JSONBody(func(o orderPlaced) bool { return o.Total == 20 })},
	} {
		t.Run(name, func(t *testing.T) {
			var rt recordTB
			got := outboxtest.RequireEnqueued[orderPlaced](&rt, msgs, opts)
			rt.passed(t)
			if got == nil || got.Body.OrderID != "o-2" || got.Envelope.ID != msgs[1].ID {
				t.Fatalf("got %+v, want o-2", got)
			}
		})
	}
}

func TestRequireEnqueuedFailures(t *testing.T) {
	msgs := enqueued(t,
		keyed(orderPlaced{OrderID: "o-1", Total: 10}, "c-1", "acme"),
		keyed(orderPlaced{OrderID: "o-2", Total: 20}, "", ""),
	)
	t.Run("none", func(t *testing.T) {
		var rt recordTB
		got := outboxtest.RequireEnqueued[orderPlaced](&rt, msgs, &outboxtest.RequireOpts{TenantID: "globex", OrderingKey: "c-1"})
		if got != nil {
			t.Fatalf("got %+v after a failure", got)
		}
		mustContain(t, rt.failed(t),
			`expected 1 message of type "orders.placed" with ordering key "c-1" and tenant "globex", found none`,
			"enqueued (2):",
			`#1 orders.placed id=`+msgs[0].ID.String()+` key="c-1" tenant="acme" payload={"order_id":"o-1","total":10}`,
			`#2 orders.placed id=`+msgs[1].ID.String()+` payload={"order_id":"o-2","total":20}`)
	})
	t.Run("several", func(t *testing.T) {
		var rt recordTB
		outboxtest.RequireEnqueued[orderPlaced](&rt, msgs, nil)
		mustContain(t, rt.failed(t), `expected 1 message of type "orders.placed", found 2 (#1, #2)`)
	})
	t.Run("other type", func(t *testing.T) {
		var rt recordTB
		outboxtest.RequireEnqueued[orderCancelled](&rt, msgs, nil)
		mustContain(t, rt.failed(t), `of type "orders.cancelled", found none`)
	})
	t.Run("nothing enqueued", func(t *testing.T) {
		var rt recordTB
		outboxtest.RequireEnqueued[orderCancelled](&rt, nil, nil)
		mustContain(t, rt.failed(t), "found none\nenqueued: nothing")
	})
	t.Run("payload predicate", func(t *testing.T) {
		var rt recordTB
		outboxtest.RequireEnqueued[orderPlaced](&rt, msgs, &outboxtest.RequireOpts{Payload: func([]byte) bool { return false }})
		mustContain(t, rt.failed(t), `with a payload its predicate accepts, found none`)
	})
}

func TestRequireEnqueuedBodyThatDoesNotDecode(t *testing.T) {
	// A body type whose JSON does not fit the type asked for: the same
	// message type, another shape.
	msgs := enqueued(t, reliar.NewMsg(placedAsText{OrderID: "o-1", Total: "ten"}))
	var rt recordTB
	outboxtest.RequireEnqueued[orderPlaced](&rt, msgs, nil)
	mustContain(t, rt.failed(t), "does not decode into outboxtest_test.orderPlaced")
}

type placedAsText struct {
	OrderID string `json:"order_id"`
	Total   string `json:"total"`
}

func (placedAsText) MessageType() string { return "orders.placed" }

func TestRequireNotEnqueued(t *testing.T) {
	msgs := enqueued(t,
		keyed(orderPlaced{OrderID: "o-1"}, "c-1", "acme"),
		keyed(orderCancelled{OrderID: "o-1"}, "c-1", "acme"),
	)
	var ok recordTB
	outboxtest.RequireNotEnqueued[orderPlaced](&ok, msgs, &outboxtest.RequireOpts{TenantID: "globex"})
	outboxtest.RequireNotEnqueued[orderPlaced](&ok, nil, nil)
	ok.passed(t)

	var rt recordTB
	outboxtest.RequireNotEnqueued[orderCancelled](&rt, msgs, nil)
	mustContain(t, rt.failed(t), `expected no message of type "orders.cancelled", found 1 (#2)`, "#2 orders.cancelled id="+msgs[1].ID.String())
}

func TestRequireManyEnqueued(t *testing.T) {
	msgs := enqueued(t,
		keyed(orderPlaced{OrderID: "o-1"}, "c-1", ""),
		keyed(otherMessage{}, "", ""),
		keyed(orderCancelled{OrderID: "o-1"}, "c-1", ""),
	)
	placed := outboxtest.Expected{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-1"}}
	cancelled := outboxtest.Expected{Type: "orders.cancelled"}

	var ok recordTB
	got := outboxtest.RequireManyEnqueued(&ok, msgs, []outboxtest.Expected{placed, cancelled})
	ok.passed(t)
	if len(got) != 2 || got[0].ID != msgs[0].ID || got[1].ID != msgs[2].ID {
		t.Fatalf("got %v, want messages 1 and 3", got)
	}

	for name, c := range map[string]struct {
		want []outboxtest.Expected
		msg  string
	}{
		"order":   {[]outboxtest.Expected{cancelled, placed}, `message 1 of 2 (#1 below) is not of type "orders.cancelled"`},
		"missing": {[]outboxtest.Expected{placed, cancelled, cancelled}, `expected 3 messages, found 2: message 3, of type "orders.cancelled", is missing`},
		"opts":    {[]outboxtest.Expected{{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-9"}}, cancelled}, `message 1 of 2 (#1 below) is not of type "orders.placed" with ordering key "c-9"`},
	} {
		t.Run(name, func(t *testing.T) {
			var rt recordTB
			if got := outboxtest.RequireManyEnqueued(&rt, msgs, c.want); got != nil {
				t.Errorf("got %v after a failure", got)
			}
			mustContain(t, rt.failed(t), c.msg, "enqueued (3):")
		})
	}
}

func TestRequireManyEnqueuedOneTooMany(t *testing.T) {
	msgs := enqueued(t, reliar.NewMsg(orderPlaced{OrderID: "o-1"}), reliar.NewMsg(orderPlaced{OrderID: "o-2"}))
	var rt recordTB
	outboxtest.RequireManyEnqueued(&rt, msgs, []outboxtest.Expected{{Type: "orders.placed"}})
	mustContain(t, rt.failed(t), `expected 1 messages, found 2: #2 below is one too many`)
}

type otherMessage struct{}

func (otherMessage) MessageType() string { return "audit.logged" }

// textSerializer writes bodies as plain text, which the assertions do not
// decode.
type textSerializer struct{}

func (textSerializer) ContentType() string { return "text/plain" }

func (textSerializer) Serialize(body any) ([]byte, error) {
	return []byte(body.(orderPlaced).OrderID), nil
}

func TestRequireEnqueuedLeavesAnotherContentTypeUndecoded(t *testing.T) {
	f := outboxtest.FakeEnqueuer[struct{}]{Serializer: textSerializer{}}
	if _, err := f.Enqueue(context.Background(), struct{}{}, reliar.NewMsg(orderPlaced{OrderID: "o-1"})); err != nil {
		t.Fatal(err)
	}
	var rt recordTB
	got := outboxtest.RequireEnqueued[orderPlaced](&rt, f.Enqueued(), &outboxtest.RequireOpts{
		Payload: func(p []byte) bool { return string(p) == "o-1" },
	})
	rt.passed(t)
	if got.Body != (orderPlaced{}) || string(got.Envelope.Payload) != "o-1" || got.Envelope.ContentType != "text/plain" {
		t.Fatalf("found %+v", got)
	}
}
