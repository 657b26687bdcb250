package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// statedDefault finds "--flag (default X)" in a command's long help.
var statedDefault = regexp.MustCompile(`--([a-z][a-z-]*)\s+\(default\s+([^),;]+)`)

// TestLongHelpStatesTheFlagsDefaults: where a command's description states
// a flag's default, it is the default the flag shows (and takes).
func TestLongHelpStatesTheFlagsDefaults(t *testing.T) {
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, m := range statedDefault.FindAllStringSubmatch(c.Long, -1) {
			fl := c.Flag(m[1])
			if fl == nil {
				t.Errorf("%s --help states a default of --%s, which it does not have", c.CommandPath(), m[1])
				continue
			}
			if fl.DefValue == "" {
				continue // a default derived from other flags, stated in words
			}
			checked++
			if got := strings.TrimSpace(m[2]); got != fl.DefValue {
				t.Errorf("%s --help says --%s defaults to %q, the flag to %q", c.CommandPath(), m[1], got, fl.DefValue)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&App{}).rootCommand())
	if checked == 0 {
		t.Fatal("no stated default checked")
	}
}

// TestFlagsThatTakeWordsSayso: in every command, a flag whose help offers
// "off" or "forever" shows a type that names the word (int|off), never a
// bare int or duration.
func TestFlagsThatTakeWordsSayso(t *testing.T) {
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			for _, w := range []string{"off", "forever"} {
				if strings.Contains(fl.Usage, `"`+w+`"`) {
					checked++
					if !strings.Contains(fl.Value.Type(), "|"+w) {
						t.Errorf("%s --%s takes %q but shows the type %q", c.CommandPath(), fl.Name, w, fl.Value.Type())
					}
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&App{}).rootCommand())
	if checked < 5 {
		t.Fatalf("only %d flags take a word", checked)
	}
}
