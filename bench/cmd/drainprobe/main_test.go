package main

import (
	"io"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		want    config
	}{
		{args: nil, want: config{messages: 100000}},
		{args: []string{"-n", "500", "-raw", "-max-in-flight", "1024"}, want: config{messages: 500, raw: true, maxInFlight: 1024}},
		{args: []string{"-n", "150"}, wantErr: true},
		{args: []string{"-n", "0"}, wantErr: true},
		{args: []string{"-bogus"}, wantErr: true},
	}
	for _, tt := range tests {
		c, err := parse(tt.args, io.Discard)
		if (err != nil) != tt.wantErr {
			t.Errorf("parse(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		c.dsn = ""
		if err == nil && c != tt.want {
			t.Errorf("parse(%q) = %+v, want %+v", tt.args, c, tt.want)
		}
	}
}

func TestSummarise(t *testing.T) {
	calls := []call{{3 * time.Millisecond, 512}, {1 * time.Millisecond, 512}, {2 * time.Millisecond, 100}}
	st := summarise(calls, 12*time.Millisecond)
	if st.count != 3 || st.rows != 1124 || st.mean != 2*time.Millisecond || st.p50 != 2*time.Millisecond || st.max != 3*time.Millisecond || st.busy != 0.5 {
		t.Fatalf("summarise = %+v", st)
	}
	if got := summarise(nil, time.Second); got != (callStats{}) {
		t.Fatalf("summarise(nil) = %+v", got)
	}
}
