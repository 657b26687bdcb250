package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// flags returns a flag set like a command's, parsed from args.
func flags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	fs.Int("messages", 10000, "")
	fs.String("database-url", "", "")
	fs.Duration("timeout", time.Minute, "")
	fs.Bool("json", false, "")
	fs.StringSlice("tags", nil, "")
	fs.String("config", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

const fileText = `
messages: 7
database-url: sqlite://file.db
timeout: 3s
demo:
  messages: 8
  json: true
migrate:
  database_url: postgres://other
tags: [a, b]
`

func TestPrecedence(t *testing.T) {
	file, err := Parse("reliar.yaml", []byte(fileText))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		file     *File
		section  []string
		flag     string
		want     string
		wantFrom Source
	}{
		{"default", nil, nil, nil, []string{"demo"}, "messages", "10000", FromDefault},
		{"file top level", nil, nil, file, nil, "messages", "7", FromFile},
		{"file section wins over top level", nil, nil, file, []string{"demo"}, "messages", "8", FromFile},
		{"other command's section ignored", nil, nil, file, []string{"demo"}, "database-url", "sqlite://file.db", FromFile},
		{"snake case key", nil, nil, file, []string{"migrate"}, "database-url", "postgres://other", FromFile},
		{"env wins over file", nil, map[string]string{"RELIAR_MESSAGES": "9"}, file, []string{"demo"}, "messages", "9", FromEnv},
		{"empty env is unset", nil, map[string]string{"RELIAR_MESSAGES": ""}, file, []string{"demo"}, "messages", "8", FromFile},
		{"flag wins over env and file", []string{"--messages=11"}, map[string]string{"RELIAR_MESSAGES": "9"}, file, []string{"demo"}, "messages", "11", FromFlag},
		{"env for a dashed flag", nil, map[string]string{"RELIAR_DATABASE_URL": "postgres://env"}, file, nil, "database-url", "postgres://env", FromEnv},
		{"duration from file", nil, nil, file, nil, "timeout", "3s", FromFile},
		{"bool from section", nil, nil, file, []string{"demo"}, "json", "true", FromFile},
		{"list from file", nil, nil, file, nil, "tags", "[a,b]", FromFile},
		{"skipped flag", nil, map[string]string{"RELIAR_CONFIG": "x.yaml"}, file, nil, "config", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flags(t, tt.args...)
			from, err := Apply(fs, tt.section, env(tt.env), tt.file, "config")
			if err != nil {
				t.Fatal(err)
			}
			if got := fs.Lookup(tt.flag).Value.String(); got != tt.want {
				t.Fatalf("--%s = %q, want %q", tt.flag, got, tt.want)
			}
			if from[tt.flag] != tt.wantFrom {
				t.Fatalf("--%s came from %q, want %q", tt.flag, from[tt.flag], tt.wantFrom)
			}
		})
	}
}

func TestInvalidValues(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		file       string
		wantOrigin string
	}{
		{"env", map[string]string{"RELIAR_MESSAGES": "many"}, "", "RELIAR_MESSAGES"},
		{"file", nil, "demo:\n  messages: many\n", "reliar.yaml:demo.messages"},
		{"file mapping as value", nil, "timeout:\n  x: 1\nmessages:\n  - {a: 1}\n", "reliar.yaml:messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, err := Parse("reliar.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Apply(flags(t), []string{"demo"}, env(tt.env), file)
			var ve *ValueError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Apply = %v, want a *ValueError", err)
			}
			if ve.Origin != tt.wantOrigin || ve.Flag != "messages" {
				t.Fatalf("error %+v, want origin %q on messages", ve, tt.wantOrigin)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("messages: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("- a list\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"no file", "", false},
		{"good", good, false},
		{"missing", filepath.Join(dir, "missing.yaml"), true},
		{"not a mapping", bad, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Load(tt.path)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Load = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || f == nil {
				t.Fatalf("Load = %v, %v", f, err)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"database-url": "RELIAR_DATABASE_URL",
		"messages":     "RELIAR_MESSAGES",
		"log-level":    "RELIAR_LOG_LEVEL",
	} {
		if got := EnvName(flag); got != want {
			t.Fatalf("EnvName(%q) = %q, want %q", flag, got, want)
		}
	}
}
