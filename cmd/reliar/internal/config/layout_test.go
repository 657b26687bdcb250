package config

import (
	"errors"
	"strings"
	"testing"
)

// testLayout is a small command tree: relay and purge share
// dead-retention, dead has subcommands.
var testLayout = Layout{
	Shared: []string{"database-url", "schema", "log-level", "log-format"},
	Sections: map[string]*Section{
		"relay": {Keys: []string{"database-url", "dispatchers", "dead-retention", "broker"}},
		"purge": {Keys: []string{"database-url", "dead-retention", "published-retention"}},
		"dead": {Keys: []string{"limit", "type"}, Sections: map[string]*Section{
			"list":  {Keys: []string{"limit", "type", "json"}},
			"retry": {Keys: []string{"limit", "type"}},
		}},
		"version": {},
	},
	CommandLineOnly: []string{"yes", "force", "config"},
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// want holds, for each problem in key order, the key and the
		// suggestion ("" for none); nil means no problem.
		want [][2]string
	}{
		{"valid", "database-url: x\nrelay:\n  dispatchers: 2\ndead:\n  limit: 5\n  list:\n    json: true\nversion: {}\n", nil},
		{"snake case", "database_url: x\nrelay:\n  dead_retention: 1h\n", nil},
		{"typo at the top", "dispatchrs: 3\n", [][2]string{{"dispatchrs", "relay.dispatchers"}}},
		{"typo in a section", "relay:\n  dispatchrs: 3\n", [][2]string{{"relay.dispatchrs", "relay.dispatchers"}}},
		{"scalar for a section", "relay: 5\n", [][2]string{{"relay", "relay: {broker: 5}"}}},
		{"command key at the top", "dead-retention: 0\n", [][2]string{{"dead-retention", "purge.dead-retention"}}},
		{"key of another command", "purge:\n  dispatchers: 3\n", [][2]string{{"purge.dispatchers", "relay.dispatchers"}}},
		{"misspelt section", "rely:\n  dispatchers: 3\n", [][2]string{{"rely", "relay"}}},
		{"nothing near", "zzzzzzzzzzzz: 1\n", [][2]string{{"zzzzzzzzzzzz", ""}}},
		{"confirmation in a file", "purge:\n  force: true\nyes: true\n", [][2]string{{"purge.force", ""}, {"yes", ""}}},
		{"mapping for a value", "relay:\n  dispatchers:\n    a: 1\n", [][2]string{{"relay.dispatchers", ""}}},
		{"every problem at once", "dispatchrs: 3\nrelay: 5\ndead:\n  list:\n    limt: 3\n", [][2]string{{"dead.list.limt", "dead.list.limit"}, {"dispatchrs", "relay.dispatchers"}, {"relay", "relay: {broker: 5}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("reliar.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = f.Check(testLayout)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check = %v, want ErrInvalid", err)
			}
			joined, ok := err.(interface{ Unwrap() []error })
			if !ok {
				t.Fatalf("Check = %T, want joined errors", err)
			}
			errs := joined.Unwrap()
			if len(errs) != len(tt.want) {
				t.Fatalf("Check = %v, want %d problems", err, len(tt.want))
			}
			for i, e := range errs {
				var ke *KeyError
				if !errors.As(e, &ke) || ke.Key != tt.want[i][0] || ke.Suggest != tt.want[i][1] {
					t.Fatalf("problem %d: %#v, want key %q suggesting %q", i, e, tt.want[i][0], tt.want[i][1])
				}
				if !strings.Contains(e.Error(), `"`+ke.Key+`"`) || ke.Suggest != "" && !strings.Contains(e.Error(), ke.Suggest) {
					t.Fatalf("message %q does not name the key and the suggestion", e)
				}
			}
		})
	}
}

// TestTopLevelHoldsOnlySharedKeys: once checked, a file gives values to a
// command's flags from its section only; the top level gives only the
// shared keys.
func TestTopLevelHoldsOnlySharedKeys(t *testing.T) {
	f, err := Parse("reliar.yaml", []byte("database-url: sqlite://top.db\nmessages: 7\ndemo:\n  json: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := testLayout
	l.Sections = map[string]*Section{"demo": {Keys: []string{"messages", "json", "database-url"}}}
	_ = f.Check(l) // messages is refused; the rest still applies
	fs := flags(t)
	from, err := Apply(fs, []string{"demo"}, nil, f, "config")
	if err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("messages").Value.String() != "10000" || from["messages"] != FromDefault {
		t.Fatalf("messages = %s from %s: a top-level key that is not shared applied", fs.Lookup("messages").Value, from["messages"])
	}
	if fs.Lookup("database-url").Value.String() != "sqlite://top.db" || fs.Lookup("json").Value.String() != "true" {
		t.Fatal("shared and section keys did not apply")
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"dispatchrs", "dispatchers", 1}, {"relay", "rely", 1}, {"kitten", "sitting", 3}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
