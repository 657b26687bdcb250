// Package payload is the benchmark's message: a fixed-size JSON document that
// carries its sequence number and the time it was sent, so that a sink can
// count deliveries and measure latency without a full JSON decode.
package payload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Size is the length of every encoded payload, in bytes.
const Size = 200

// Field widths of the fixed layout
// {"seq":"<12 digits>","ts":"<19 digits>","pad":"<x…>"}.
const (
	seqDigits = 12
	tsDigits  = 19
	seqStart  = len(`{"seq":"`)
	tsStart   = seqStart + seqDigits + len(`","ts":"`)
	padStart  = tsStart + tsDigits + len(`","pad":"`)
	padLen    = Size - padStart - len(`"}`)
)

// pad fills every payload up to Size.
var pad = strings.Repeat("x", padLen)

// ErrMalformed is returned by Decode for bytes that are not an encoded Doc.
var ErrMalformed = errors.New("payload: malformed")

// Doc is one benchmark message. Its JSON encoding (encoding/json or Encode)
// is exactly Size bytes, with the fields in a fixed order.
type Doc struct {
	// Seq numbers the message within a run, from 0.
	Seq string `json:"seq"`
	// TS is when the message was sent, in Unix nanoseconds.
	TS string `json:"ts"`
	// Pad fills the document up to Size bytes.
	Pad string `json:"pad"`
}

// New returns the document of message seq sent at ts (Unix nanoseconds).
func New(seq int, ts int64) Doc {
	return Doc{
		Seq: fmt.Sprintf("%0*d", seqDigits, seq),
		TS:  fmt.Sprintf("%0*d", tsDigits, ts),
		Pad: pad,
	}
}

// Stamp returns d with its send time set to ts (Unix nanoseconds).
func (d Doc) Stamp(ts int64) Doc {
	d.TS = fmt.Sprintf("%0*d", tsDigits, ts)
	return d
}

// Fields parses the document's sequence number and send time.
func (d Doc) Fields() (seq int, ts int64, err error) {
	s, err := strconv.Atoi(d.Seq)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: seq %q", ErrMalformed, d.Seq)
	}
	t, err := strconv.ParseInt(d.TS, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: ts %q", ErrMalformed, d.TS)
	}
	return s, t, nil
}

// Encode returns the document's JSON encoding, byte for byte what
// encoding/json produces for it.
func (d Doc) Encode() []byte {
	b := make([]byte, 0, Size)
	b = append(b, `{"seq":"`...)
	b = append(b, d.Seq...)
	b = append(b, `","ts":"`...)
	b = append(b, d.TS...)
	b = append(b, `","pad":"`...)
	b = append(b, d.Pad...)
	b = append(b, `"}`...)
	return b
}

// Decode reads the sequence number and send time of an encoded document by
// position, without a JSON decoder.
func Decode(b []byte) (seq int, ts int64, err error) {
	if len(b) != Size || string(b[:seqStart]) != `{"seq":"` || string(b[tsStart-len(`","ts":"`):tsStart]) != `","ts":"` {
		return 0, 0, ErrMalformed
	}
	return Doc{Seq: string(b[seqStart : seqStart+seqDigits]), TS: string(b[tsStart : tsStart+tsDigits])}.Fields()
}
