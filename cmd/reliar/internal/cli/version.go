package cli

import (
	"context"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCommand(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version of reliar and of Go it was built with",
		Example: "  reliar version\n  reliar version --json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	cmd.RunE = app.run(func(_ context.Context, cmd *cobra.Command) error {
		v := buildVersion()
		out := app.Printer(cmd, asJSON)
		if asJSON {
			return out.Document(v)
		}
		line := "reliar " + v.Version + " " + v.Go + " " + v.Platform
		if v.Revision != "" {
			line += " (" + v.Revision + ")"
		}
		return out.Final("%s", line)
	})
	return cmd
}

// versionInfo is what version reports.
type versionInfo struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Revision string `json:"revision,omitempty"`
}

// buildVersion reads the module version and VCS revision from the build
// information; a build from a source tree reports "(devel)".
func buildVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v.Revision = s.Value
		}
	}
	return v
}
