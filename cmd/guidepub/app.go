package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/site/clock"
)

// env is what every command shares: the clock it reads the time from and
// where it writes. Each command is a method set on it: xxxCommand returns
// the command's usage and flags, runXxx is its action.
type env struct {
	clock          clock.Clock
	stdout, stderr io.Writer
}

// newApp returns the guidepub command-line application writing to stdout
// and stderr, on the system clock.
func newApp(stdout, stderr io.Writer) *cli.App {
	return newAppWith(&env{clock: clock.System(), stdout: stdout, stderr: stderr})
}

// newAppWith returns the application of e.
func newAppWith(e *env) *cli.App {
	app := &cli.App{
		Name:  "guidepub",
		Usage: "publish measured floor-plan data as a static site and a small sidecar",
		Description: `guidepub turns property bundles (a folder with guide.json and its media) into
precompressed static JSON documents that any CDN or object store can host,
and runs the small sidecar that serves what cannot be static: the Portal API,
webhook delivery and private documents.

Every setting can also be given as an environment variable: GUIDEPUB_ and the
flag name in capitals with '-' as '_' (GUIDEPUB_VIEW_URL for --view-url); each
command's help names them. Only the one-shot --print-config and --print-schema
have none.`,
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			e.exportCommand(),
			e.validateCommand(),
			e.watchCommand(),
			e.serveCommand(),
			e.sidecarCommand(),
			e.devCommand(),
			e.tokenCommand(),
			appCommand(),
			ownerCommand(),
			healthcheckCommand(),
			e.publishCommand(),
		},
		Version: version(),
		Action: func(c *cli.Context) error {
			// "help" is not a command (it would be listed among them, and
			// under every command with subcommands); "help <command>" shows
			// what "<command> --help" does.
			if c.Args().First() == "help" {
				return showHelp(c, c.Args().Tail())
			}
			if c.Args().Present() {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Suggest:        true,
		OnUsageError:   onUsageError,
		ExitErrHandler: func(*cli.Context, error) {}, // exit codes are mapped in main
	}
	setUsageErrors(app.Commands)
	return app
}

// onUsageError marks a flag parsing error as bad usage (exit status 2).
func onUsageError(_ *cli.Context, err error, _ bool) error { return &usageError{err} }

// setUsageErrors sets onUsageError on every command and subcommand:
// cli.App.OnUsageError covers only the global flags. A command with
// subcommands gets an action that shows its help, or calls an unknown
// subcommand bad usage (urfave/cli's default is "No help topic", exit 1).
func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			name := c.Name
			c.Action = func(c *cli.Context) error {
				if c.Args().Present() {
					return usagef("unknown command %q", name+" "+c.Args().First())
				}
				return cli.ShowSubcommandHelp(c)
			}
		}
		setUsageErrors(c.Subcommands)
	}
}

// showHelp shows the help of the command named by args (a command and
// its subcommands), or the application's help when args is empty.
func showHelp(c *cli.Context, args []string) error {
	if len(args) == 0 {
		return cli.ShowAppHelp(c)
	}
	cmds := c.App.Commands
	for i, name := range args {
		var found *cli.Command
		for _, sub := range cmds {
			if sub.HasName(name) {
				found = sub
			}
		}
		if found == nil {
			return usagef("unknown command %q", strings.Join(args[:i+1], " "))
		}
		cmds = found.Subcommands
	}
	// The same output as "<command> --help": run that.
	return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, args...), "--help"))
}

// buildVersion, when set at link time (make build: -ldflags "-X
// main.buildVersion=$(git describe ...)"), is guidepub's version.
var buildVersion string

// version returns guidepub's version: buildVersion when set, else what
// the Go toolchain stamped in the binary: the module version (a tag, or a
// pseudo-version of the commit, "+dirty" when built from modified files),
// or, when there is none ("(devel)"), the commit; "devel" when nothing was
// stamped (GOFLAGS=-buildvcs=false, go test).
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if dirty {
		rev += "+dirty"
	}
	return "devel " + rev
}

// envVars returns the environment variable names for a flag.
func envVars(flag string) []string {
	b := []byte("GUIDEPUB_" + flag)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return []string{string(b)}
}

// newLogger returns the logger of every command: JSON lines on w, at level
// Info (Warn for publish, whose progress goes to the terminal).
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
