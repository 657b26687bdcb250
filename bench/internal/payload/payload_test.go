package payload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEncodeIsJSONOfSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int
		ts   int64
	}{
		{"zero", 0, 0},
		{"typical", 12345, 1_790_000_000_123_456_789},
		{"largest", 999_999_999_999, 9_223_372_036_854_775_807},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.seq, tc.ts)
			b := d.Encode()
			if len(b) != Size {
				t.Fatalf("len(Encode()) = %d, want %d", len(b), Size)
			}
			want, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != string(want) {
				t.Fatalf("Encode() = %s\nwant encoding/json's %s", b, want)
			}
			seq, ts, err := Decode(b)
			if err != nil || seq != tc.seq || ts != tc.ts {
				t.Fatalf("Decode = %d, %d, %v; want %d, %d, nil", seq, ts, err, tc.seq, tc.ts)
			}
			var back Doc
			if err := json.Unmarshal(b, &back); err != nil || back != d {
				t.Fatalf("json round trip = %+v, %v; want %+v", back, err, d)
			}
		})
	}
}

func TestStamp(t *testing.T) {
	d := New(7, 1).Stamp(42)
	seq, ts, err := d.Fields()
	if err != nil || seq != 7 || ts != 42 {
		t.Fatalf("Fields() = %d, %d, %v; want 7, 42, nil", seq, ts, err)
	}
	if len(d.Encode()) != Size {
		t.Fatalf("a stamped document is %d bytes, want %d", len(d.Encode()), Size)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := string(New(1, 2).Encode())
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"short", good[:Size-1]},
		{"long", good + " "},
		{"wrong prefix", "[" + good[1:]},
		{"wrong middle", strings.Replace(good, `","ts":"`, `","tx":"`, 1)},
		{"letters in seq", strings.Replace(good, "000000000001", "00000000000a", 1)},
		{"letters in ts", strings.Replace(good, "0000000000000000002", "000000000000000000b", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Decode([]byte(tc.in)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%q) error = %v, want ErrMalformed", tc.in, err)
			}
		})
	}
}

func TestFieldsMalformed(t *testing.T) {
	for _, d := range []Doc{{Seq: "x", TS: "1"}, {Seq: "1", TS: "y"}} {
		if _, _, err := d.Fields(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%+v.Fields() error = %v, want ErrMalformed", d, err)
		}
	}
}
