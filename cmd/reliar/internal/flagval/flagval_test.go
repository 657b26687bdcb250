package flagval

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/reliar/reliar/outbox"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		name    string
		def     time.Duration
		words   []Word
		arg     string
		want    time.Duration
		wantErr string
	}{
		{"unset keeps the default", 14 * Day, nil, "", 14 * Day, ""},
		{"zero is the default", 14 * Day, nil, "0", 14 * Day, ""},
		{"zero with a unit is the default", time.Minute, nil, "0s", time.Minute, ""},
		{"zero stays zero without a default", 0, nil, "0", 0, ""},
		{"days", 0, nil, "30d", 30 * Day, ""},
		{"go duration", 0, nil, "90m", 90 * time.Minute, ""},
		{"negative refused", time.Minute, nil, "-1s", time.Minute, "must not be negative"},
		{"negative refused despite words", 0, []Word{Forever}, "-1ns", 0, `"forever"`},
		{"forever", 14 * Day, []Word{Forever}, "forever", outbox.KeepForever, ""},
		{"off", 0, []Word{Off}, "OFF", outbox.Off, ""},
		{"word not taken", 0, []Word{Forever}, "off", 0, "want a Go duration"},
		{"over the cap", 0, nil, "2h", 0, "at most 1h"},
		{"garbage", 0, nil, "soon", 0, "want a Go duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			var d time.Duration
			max := time.Duration(0)
			if tt.name == "over the cap" {
				max = time.Hour
			}
			Duration(fs, &d, "keep", tt.def, "", max, tt.words...)
			var args []string
			if tt.arg != "" {
				args = []string{"--keep", tt.arg}
			}
			err := fs.Parse(args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--keep") {
					t.Fatalf("error %v, want one naming --keep with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || d != tt.want {
				t.Fatalf("--keep %q = %v, %v; want %v", tt.arg, d, err, tt.want)
			}
		})
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var d time.Duration
	Duration(fs, &d, "keep", 14*Day, "", 0, Forever)
	if fs.Lookup("keep").DefValue != "14d" || fs.Lookup("keep").Value.Type() != "duration|forever" {
		t.Fatalf("default shown %q", fs.Lookup("keep").DefValue)
	}
	_ = fs.Set("keep", "forever")
	if fs.Lookup("keep").Value.String() != "forever" {
		t.Fatalf("forever shown as %q", fs.Lookup("keep").Value.String())
	}
}

func TestInt(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var n, m int
	Int(fs, &n, "limit", 100, "", 1000)
	Int(fs, &m, "breaker", 0, "", 0, Off)
	for _, tt := range []struct {
		args    []string
		n, m    int
		wantErr string
	}{
		{nil, 100, 0, ""},
		{[]string{"--limit", "0"}, 100, 0, ""},
		{[]string{"--limit", "7", "--breaker", "off"}, 7, outbox.Off, ""},
		{[]string{"--limit", "1001"}, 0, 0, "at most 1000"},
		{[]string{"--limit", "-1"}, 0, 0, "must not be negative"},
		{[]string{"--breaker", "-1"}, 0, 0, `"off"`},
		{[]string{"--limit", "many"}, 0, 0, "whole number"},
	} {
		err := fs.Parse(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("%v: error %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || n != tt.n || m != tt.m {
			t.Fatalf("%v: %d, %d, %v", tt.args, n, m, err)
		}
	}
}

func TestSchemaAndAddr(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var schema, addr string
	Schema(fs, &schema, "schema", "")
	Addr(fs, &addr, "metrics-addr", "127.0.0.1:9090", "")
	if schema != "" || addr != "127.0.0.1:9090" {
		t.Fatalf("defaults %q %q", schema, addr)
	}
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--schema", "billing"}, true},
		{[]string{"--schema", ""}, false},
		{[]string{"--schema", "x; drop"}, false},
		{[]string{"--metrics-addr", ":9090"}, true},
		{[]string{"--metrics-addr", "0.0.0.0:0"}, true},
		{[]string{"--metrics-addr", "[::1]:65535"}, true},
		{[]string{"--metrics-addr", "0.0.0.0:99999"}, false},
		{[]string{"--metrics-addr", "0.0.0.0:-1"}, false},
		{[]string{"--metrics-addr", "nope"}, false},
		{[]string{"--metrics-addr", "a b:80"}, false},
	} {
		err := fs.Parse(tt.args)
		if (err == nil) != tt.ok {
			t.Errorf("%q: %v", tt.args, err)
		}
		if err != nil && (!errors.Is(err, ErrBadValue) && !strings.Contains(err.Error(), "bad value") || !strings.Contains(err.Error(), tt.args[0])) {
			t.Errorf("%q: error %v does not name the flag", tt.args, err)
		}
	}
}

// TestFormatDurationEdges covers the edges of every unit: a formatter that
// trims a "0s" suffix cuts 1m30s to "1m3".
func TestFormatDurationEdges(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{70 * time.Second, "1m10s"},
		{90 * time.Second, "1m30s"},
		{10*time.Minute + 50*time.Second, "10m50s"},
		{time.Hour, "1h"},
		{time.Hour + 10*time.Second, "1h0m10s"},
		{time.Hour + 10*time.Minute, "1h10m"},
		{time.Hour + 10*time.Minute + 20*time.Second, "1h10m20s"},
		{24 * time.Hour, "1d"},
		{36 * time.Hour, "36h"},
		{Day + 90*time.Second, "24h1m30s"},
		{14 * Day, "14d"},
		{-90 * time.Second, "-1m30s"},
	}
	for _, tt := range tests {
		got := FormatDuration(tt.in)
		if got != tt.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.in < 0 {
			continue
		}
		if back, err := ParseDuration(got); err != nil || back != tt.in {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", got, back, err, tt.in)
		}
	}
}

func TestParseAndFormatDuration(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 36 * time.Hour, 14 * Day, 95 * time.Second} {
		if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("round trip of %v: %v, %v", d, back, err)
		}
	}
	if _, err := ParseDuration("-3d"); !errors.Is(err, ErrBadValue) {
		t.Errorf("-3d: %v", err)
	}
}

// TestTypeNamesTheWords: a flag that takes "off" or "forever" shows a type
// that says so in the help, not a bare int or duration.
func TestTypeNamesTheWords(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var n, m int
	var d, e time.Duration
	Int(fs, &n, "limit", 0, "", 0)
	Int(fs, &m, "max-attempts", 0, "", 0, Off)
	Duration(fs, &d, "lease", 0, "", 0)
	Duration(fs, &e, "dead-retention", 0, "", 0, Forever)
	for name, want := range map[string]string{"limit": "int", "max-attempts": "int|off", "lease": "duration", "dead-retention": "duration|forever"} {
		if got := fs.Lookup(name).Value.Type(); got != want {
			t.Errorf("--%s type %q, want %q", name, got, want)
		}
		if !strings.Contains(fs.FlagUsages(), "--"+name+" "+want+" ") {
			t.Errorf("help does not show --%s %s:\n%s", name, want, fs.FlagUsages())
		}
	}
}
