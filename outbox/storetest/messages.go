package storetest

import (
	"time"

	"github.com/reliar/reliar"
)

// created is the suite's plain message: version 1, JSON payload.
type created struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func (created) MessageType() string { return "storetest.created" }

// renamed is a second message type, at version 3.
type renamed struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (renamed) MessageType() string    { return "storetest.renamed" }
func (renamed) MessageVersion() uint16 { return 3 }

// blob carries a payload of any size.
type blob struct {
	Data string `json:"data"`
}

func (blob) MessageType() string { return "storetest.blob" }

// newMsg returns a fresh message with its own id.
func newMsg(n int) reliar.Outgoing { return reliar.NewMsg(created{Name: "row", N: n}) }

// at returns a fresh message that becomes due at t.
func at(t time.Time) reliar.Outgoing {
	m := newMsg(0)
	m.AvailableAt = t
	return m
}

// expiring returns a fresh message that expires at t.
func expiring(t time.Time) reliar.Outgoing {
	m := newMsg(0)
	m.Metadata.Delivery.ExpiresAt = &t
	return m
}

// keyed returns a fresh message with an ordering key.
func keyed(key string) reliar.Outgoing {
	m := newMsg(0)
	m.OrderingKey = key
	return m
}
