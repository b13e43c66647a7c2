package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundleschema"
	"github.com/guidepub/guidepub/site"
)

// urlFlags returns the URL settings shared by every command that renders
// or serves links: --view-url, --unbranded-url, --embed-url, --base-url.
func urlFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "view-url", Value: exporter.DefaultViewURL, EnvVars: envVars("view-url"),
			Usage: "public host of views: {view_url}/<viewId>"},
		&cli.StringFlag{Name: "unbranded-url", Value: exporter.DefaultUnbrandedURL, EnvVars: envVars("unbranded-url"),
			Usage: "public host of unbranded views"},
		&cli.StringFlag{Name: "embed-url", Value: exporter.DefaultEmbedURL, EnvVars: envVars("embed-url"),
			Usage: "public path of embedded views (iframes)"},
		&cli.StringFlag{Name: "base-url", Value: exporter.DefaultBaseURL, EnvVars: envVars("base-url"),
			Usage: "Portal host: manage links and the Portal API"},
	}
}

// exportFlags returns the flags of "export" (and of commands that export,
// such as "watch"): sources, destinations, encodings, jobs, URLs and the
// autofill source name.
func exportFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "src", Usage: "folder of bundles (<src>/<folder>/guide.json)", EnvVars: envVars("src")},
		&cli.StringFlag{Name: "out", Usage: "public tree to write (served as is by a CDN)", EnvVars: envVars("out")},
		&cli.StringFlag{Name: "private", Usage: "private tree to write (events, records, private documents; never published)", EnvVars: envVars("private")},
		&cli.StringFlag{Name: "encodings", Value: encodingNames(site.Encodings), EnvVars: envVars("encodings"),
			Usage: "compressed siblings written beside each document: a comma-separated subset of br,zstd,gzip, or \"none\""},
		&cli.IntFlag{Name: "jobs", Value: runtime.NumCPU(), EnvVars: envVars("jobs"), Usage: "documents compressed at once (twice as many guides are read and written meanwhile)"},
		&cli.StringFlag{Name: "source-name", Value: exporter.DefaultSourceName, EnvVars: envVars("source-name"),
			Usage: "value of the autofill ...Source fields"},
	}
	return append(flags, urlFlags()...)
}

func encodingNames(encs []site.Encoding) string {
	names := make([]string, len(encs))
	for i, e := range encs {
		names[i] = e.Name
	}
	return strings.Join(names, ",")
}

// parseEncodings parses the --encodings value.
func parseEncodings(s string) ([]site.Encoding, error) {
	s = strings.TrimSpace(s)
	if s == "none" {
		return []site.Encoding{}, nil
	}
	out := []site.Encoding{}
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		enc, ok := site.EncodingByName(name)
		if !ok {
			return nil, fmt.Errorf("unknown encoding %q: use br, zstd, gzip or none", name)
		}
		if !seen[name] {
			out = append(out, enc)
		}
		seen[name] = true
	}
	return out, nil
}

// exporterConfig builds the exporter configuration from the flags of c,
// on the operating system's file system. It returns a *usageError for bad
// flag values.
func exporterConfig(c *cli.Context) (exporter.Config, error) {
	encs, err := parseEncodings(c.String("encodings"))
	if err != nil {
		return exporter.Config{}, usagef("--encodings: %v", err)
	}
	if c.Int("jobs") < 1 {
		return exporter.Config{}, usagef("--jobs must be at least 1")
	}
	src, out, priv := c.String("src"), c.String("out"), c.String("private")
	for _, f := range []string{"src", "out", "private"} {
		if c.String(f) == "" {
			return exporter.Config{}, usagef("--%s is required", f)
		}
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return exporter.Config{}, usagef("--src %s is not a folder", src)
	}
	if sameOrInside(priv, out) || sameOrInside(out, priv) {
		return exporter.Config{}, usagef("--out and --private must not contain each other")
	}
	for _, d := range []struct{ flag, dir string }{{"--out", out}, {"--private", priv}} {
		if sameOrInside(d.dir, src) || sameOrInside(src, d.dir) {
			return exporter.Config{}, usagef("%s and --src must not contain each other", d.flag)
		}
	}
	osfs := afero.NewOsFs()
	return exporter.Config{
		Src: osfs, SrcDir: src,
		Out: osfs, OutDir: out,
		Private: osfs, PrivateDir: priv,
		ViewURL: c.String("view-url"), UnbrandedURL: c.String("unbranded-url"),
		EmbedURL: c.String("embed-url"), BaseURL: c.String("base-url"),
		SourceName: c.String("source-name"),
		Encodings:  encs,
		Jobs:       c.Int("jobs"),
		Now:        time.Now,
	}, nil
}

// sameOrInside reports whether folder a is b or inside b.
func sameOrInside(a, b string) bool {
	ca, cb := cleanAbs(a), cleanAbs(b)
	return ca == cb || strings.HasPrefix(ca, strings.TrimSuffix(cb, string(os.PathSeparator))+string(os.PathSeparator))
}

func cleanAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// exportCommand returns the "export" command: one full, incremental build
// of every bundle.
func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "export every bundle under --src into the public (--out) and private (--private) trees",
		Description: `Renders each view's data/status, data/summary and reso/autofill (plus .br, .zst
and .gz siblings) and public media into --out, and each guide's record, ready
event and private documents into --private. Unchanged files are not rewritten;
files of removed views, aliases and guides are deleted. Exit status 1 when a
bundle was rejected (the others are still exported).

With --store, the ready event of every ready guide is queued for its webhooks
in the sidecar's store, once per guide revision: re-exporting unchanged
content queues nothing. With --shard i/n, only the bundle folders whose name
hashes to shard i are exported, with a manifest of their own, so n machines
can share one full rebuild.

Examples:
   guidepub export --src bundles --out public --private private
   guidepub export --src bundles --out public --private private --store private/guidepub.db
   guidepub export --src bundles --out public --private private --shard 1/4`,
		Flags: append(exportFlags(), append(eventFlags(),
			&cli.StringFlag{Name: "shard", EnvVars: envVars("shard"),
				Usage: "export only shard i of n (i/n, such as 0/4) to split a full rebuild across machines"})...),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			cfg, err := exporterConfig(c)
			if err != nil {
				return err
			}
			if cfg.Shard, cfg.Shards, err = parseShard(c.String("shard")); err != nil {
				return err
			}
			logger := newLogger(c)
			events, closeStore, err := openEvents(c, cfg, logger)
			if err != nil {
				var ue *usageError
				if errors.As(err, &ue) {
					return err
				}
				return cli.Exit(err.Error(), exitFailure)
			}
			defer closeStore()
			stderr := c.App.ErrWriter
			if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				cfg.Progress = stderr
			}
			e, err := exporter.New(cfg)
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			rep, err := e.ExportAll(c.Context)
			rejected := printProblems(stderr, rep.Guides)
			fmt.Fprintln(c.App.Writer, rep.Summary())
			if err != nil {
				return cli.Exit(fmt.Sprintf("export failed: %v", err), exitFailure)
			}
			if events != nil {
				queued, failed := queueReadyEvents(c.Context, events, rep, logger)
				fmt.Fprintf(c.App.Writer, "%d ready event deliveries queued\n", queued)
				if len(failed) > 0 {
					return cli.Exit(fmt.Sprintf("ready event not queued for %d guide(s): %s", len(failed), strings.Join(failed, ", ")), exitFailure)
				}
			}
			if rejected > 0 {
				return cli.Exit(fmt.Sprintf("%d bundle(s) rejected", rejected), exitFailure)
			}
			return nil
		},
	}
}

// commandUsageError marks a command's flag parsing error as bad usage
// (exit status 2); cli.App.OnUsageError covers only the global flags.
func commandUsageError(_ *cli.Context, err error, _ bool) error { return &usageError{err} }

// printProblems prints every problem of every rejected bundle on w, one per
// line, and returns how many bundles were rejected.
func printProblems(w io.Writer, results []exporter.GuideResult) int {
	n := 0
	for _, r := range results {
		var be *bundle.Error
		if errors.As(r.Err, &be) {
			n++
			for _, p := range be.Problems {
				fmt.Fprintln(w, p.String())
			}
		}
	}
	return n
}

// withSchemaProblems adds to each result the problems the JSON Schema
// finds in its guide.json that the bundle checks did not already report at
// the same JSON path.
func withSchemaProblems(res []exporter.GuideResult, src string) []exporter.GuideResult {
	for i, r := range res {
		file := filepath.ToSlash(filepath.Join(r.Folder, bundle.FileName))
		data, err := os.ReadFile(filepath.Join(src, r.Folder, bundle.FileName))
		if err != nil {
			continue // the bundle checks report a missing guide.json
		}
		var be *bundle.Error
		if !errors.As(r.Err, &be) {
			be = &bundle.Error{Folder: r.Folder}
		}
		seen := map[string]bool{}
		for _, p := range be.Problems {
			seen[p.Path] = true
		}
		sps, err := bundleschema.Validate(data)
		if err != nil {
			continue // not JSON: the bundle checks said so with line and column
		}
		for _, sp := range sps {
			if !seen[sp.Path] {
				be.Problems = append(be.Problems, bundle.Problem{File: file, Path: sp.Path, Message: "schema: " + sp.Message})
			}
		}
		if len(be.Problems) > 0 {
			res[i].Err = be
		}
	}
	return res
}

// validateCommand returns the "validate" command: check every bundle
// without writing anything.
func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "check every bundle under --src without writing anything",
		Description: `Loads each bundle folder under --src, checks guide.json and every file it names,
and that no two bundles claim the same guide id, view id or alias. Prints
every problem, one per line; exit status 1 if there is any. With --schema,
each guide.json is also checked against the JSON Schema shipped for editors
(print it with --print-schema).

Examples:
   guidepub validate --src bundles
   guidepub validate --src bundles --schema
   guidepub validate --print-schema > guide.schema.json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "src", Usage: "folder of bundles (<src>/<folder>/guide.json)", EnvVars: envVars("src")},
			&cli.BoolFlag{Name: "schema", EnvVars: envVars("schema"),
				Usage: "also check each guide.json against the shipped JSON Schema (" + bundleschema.FileName + ")"},
			&cli.BoolFlag{Name: "print-schema", Usage: "print the JSON Schema of guide.json and exit"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if c.Bool("print-schema") {
				_, err := c.App.Writer.Write(bundleschema.Schema())
				return err
			}
			src := c.String("src")
			if src == "" {
				return usagef("--src is required")
			}
			if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
				return usagef("--src %s is not a folder", src)
			}
			res, err := exporter.Validate(afero.NewOsFs(), src)
			if err != nil {
				return cli.Exit(err.Error(), exitFailure)
			}
			if c.Bool("schema") {
				res = withSchemaProblems(res, src)
			}
			rejected := printProblems(c.App.ErrWriter, res)
			fmt.Fprintf(c.App.Writer, "%d bundles checked, %d rejected\n", len(res), rejected)
			if rejected > 0 {
				return cli.Exit("", exitFailure)
			}
			return nil
		},
	}
}
