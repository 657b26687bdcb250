package cli

import "github.com/spf13/cobra"

// commands lists reliar's subcommands, one constructor each, in the order
// help shows them. To add a command, write <name>.go holding
// new<Name>Command(*App) *cobra.Command and add one line here.
var commands = []func(*App) *cobra.Command{
	newDemoCommand,
	newMigrateCommand,
	newRelayCommand,
	newVersionCommand,
	newStatsCommand,
	newDeadCommand,
	newPurgeCommand,
	newDoctorCommand,
	newRepairCommand,
	newServeCommand,
}
