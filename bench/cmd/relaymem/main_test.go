package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr error
		check   func(t *testing.T, c config)
	}{
		{"defaults", []string{"-relay", "r"}, nil, func(t *testing.T, c config) {
			if c.relay != "r" || c.rows != 1_000_000 || c.natsURL != "nats://127.0.0.1:4222" || len(c.args) != 0 {
				t.Errorf("%+v", c)
			}
		}},
		{"extra relay flags", []string{"-relay", "r", "-rows", "10", "--", "--batch-size", "100"}, nil, func(t *testing.T, c config) {
			if c.rows != 10 || !slices.Equal(c.args, []string{"--batch-size", "100"}) {
				t.Errorf("%+v", c)
			}
		}},
		{"no relay", nil, errUsage, nil},
		{"zero rows", []string{"-relay", "r", "-rows", "0"}, errUsage, nil},
		{"unknown flag", []string{"-fast"}, errUsage, nil},
		{"help", []string{"-h"}, flag.ErrHelp, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestMemoryOfThisProcess(t *testing.T) {
	hwm, rss, err := memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss <= 0 || hwm < rss {
		t.Fatalf("VmHWM %d kB, VmRSS %d kB", hwm, rss)
	}
	if _, _, err := memory(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
