package outboxtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reliar/reliar"
)

// maxShownPayload is how many payload bytes a failure message shows.
const maxShownPayload = 96

// describeWant says what an assertion looked for, for example
// `of type "orders.placed" with ordering key "c-7" and a payload predicate`.
func describeWant(typ string, o *RequireOpts) string {
	s := "of type " + strconv.Quote(typ)
	if o == nil {
		return s
	}
	var with []string
	if o.OrderingKey != "" {
		with = append(with, "ordering key "+strconv.Quote(o.OrderingKey))
	}
	if o.TenantID != "" {
		with = append(with, "tenant "+strconv.Quote(o.TenantID))
	}
	if o.Payload != nil {
		with = append(with, "a payload its predicate accepts")
	}
	switch len(with) {
	case 0:
		return s
	case 1:
		return s + " with " + with[0]
	default:
		return s + " with " + strings.Join(with[:len(with)-1], ", ") + " and " + with[len(with)-1]
	}
}

// describeAll lists msgs, one a line, numbered from 1 in enqueue order.
func describeAll(msgs []reliar.SerializedEnvelope) string {
	if len(msgs) == 0 {
		return "enqueued: nothing"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "enqueued (%d):", len(msgs))
	for i := range msgs {
		e := &msgs[i]
		fmt.Fprintf(&b, "\n  #%d %s id=%s", i+1, e.MessageType, e.ID)
		if e.OrderingKey != "" {
			fmt.Fprintf(&b, " key=%q", e.OrderingKey)
		}
		if e.Metadata.TenantID != "" {
			fmt.Fprintf(&b, " tenant=%q", e.Metadata.TenantID)
		}
		b.WriteString(" payload=")
		b.WriteString(showPayload(e.Payload))
	}
	return b.String()
}

// showPayload prints a payload that is printable text as it is, cut at
// maxShownPayload bytes, and any other payload as its size.
func showPayload(p []byte) string {
	if !utf8.Valid(p) {
		return fmt.Sprintf("<%d bytes>", len(p))
	}
	for _, r := range string(p) {
		if !unicode.IsPrint(r) && r != ' ' {
			return fmt.Sprintf("<%d bytes>", len(p))
		}
	}
	if len(p) <= maxShownPayload {
		return string(p)
	}
	cut := maxShownPayload
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", p[:cut], len(p))
}

// positions lists the 0-based indexes as "#1, #3".
func positions(idx []int) string {
	s := make([]string, len(idx))
	for i, n := range idx {
		s[i] = "#" + strconv.Itoa(n+1)
	}
	return strings.Join(s, ", ")
}
