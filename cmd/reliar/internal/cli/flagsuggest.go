package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/config"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// flagError is the root's flag error function: every flag error is bad
// input (exit status 2), and an unknown flag gets the closest flag of the
// command as a suggestion, as cobra gives one for a misspelt command.
func flagError(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return exitcode.UsageError(err)
	}
	var names []string
	add := func(fl *pflag.Flag) {
		if !fl.Hidden {
			names = append(names, fl.Name)
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	if s := config.Closest(name, names); s != "" {
		return exitcode.UsageError(fmt.Errorf("%w\n\nDid you mean this?\n\t--%s", err, s))
	}
	return exitcode.UsageError(err)
}
