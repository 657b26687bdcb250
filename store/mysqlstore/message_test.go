package mysqlstore_test

import "github.com/reliar/reliar"

// orderPlaced is the tests' message body.
type orderPlaced struct {
	OrderID string `json:"order_id"`
	N       int    `json:"n"`
}

func (orderPlaced) MessageType() string { return "test.order_placed" }

// newMsgs returns n fresh messages.
func newMsgs(n int) []reliar.Outgoing {
	out := make([]reliar.Outgoing, n)
	for i := range out {
		out[i] = reliar.NewMsg(orderPlaced{OrderID: "o", N: i})
	}
	return out
}
