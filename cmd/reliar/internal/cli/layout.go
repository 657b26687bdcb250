package cli

import (
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/config"
)

// sharedKeys are the keys a configuration file may hold at its top level:
// what every command means the same way.
var sharedKeys = []string{"database-url", "schema", "log-level", "log-format"}

// commandLineOnly are the flags only the command line sets: a file or a
// variable never confirms a destructive command.
var commandLineOnly = []string{"config", "help", "yes", "force"}

// configLayout describes the configuration file the command tree reads:
// the shared keys at the top level, and a section per command holding its
// flags, with a section per subcommand.
func configLayout(root *cobra.Command) config.Layout {
	return config.Layout{
		Shared:          sharedKeys,
		Sections:        sections(root),
		CommandLineOnly: commandLineOnly,
	}
}

// sections returns the sections of cmd's subcommands.
func sections(cmd *cobra.Command) map[string]*config.Section {
	out := make(map[string]*config.Section)
	for _, sub := range cmd.Commands() {
		if sub.Name() == "help" {
			continue
		}
		s := &config.Section{Sections: sections(sub)}
		add := func(fl *pflag.Flag) {
			if !slices.Contains(commandLineOnly, fl.Name) && !slices.Contains(s.Keys, fl.Name) {
				s.Keys = append(s.Keys, fl.Name)
			}
		}
		sub.LocalFlags().VisitAll(add)
		sub.InheritedFlags().VisitAll(add)
		// A section holding subcommands also takes the keys they share.
		for _, child := range s.Sections {
			for _, k := range child.Keys {
				if !slices.Contains(s.Keys, k) {
					s.Keys = append(s.Keys, k)
				}
			}
		}
		out[sub.Name()] = s
	}
	return out
}
