package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

// newApp returns the guidepub command-line application writing to stdout
// and stderr.
func newApp(stdout, stderr io.Writer) *cli.App {
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
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			exportCommand(),
			validateCommand(),
			watchCommand(),
			serveCommand(),
			sidecarCommand(),
			devCommand(),
			tokenCommand(),
			appCommand(),
			ownerCommand(),
			healthcheckCommand(),
			publishCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Suggest: true,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return &usageError{err}
		},
		ExitErrHandler: func(*cli.Context, error) {}, // exit codes are mapped in main
	}
	return app
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
