package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundleschema"
)

// validateCommand returns the "validate" command: check every bundle
// without writing anything.
func (e *env) validateCommand() *cli.Command {
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
		Flags:  validateFlags(),
		Action: e.runValidate,
	}
}

// runValidate is the "validate" command.
func (e *env) runValidate(c *cli.Context) error {
	if c.Bool("print-schema") {
		_, err := e.stdout.Write(bundleschema.Schema())
		return err
	}
	src := c.String("src")
	if src == "" {
		return usagef("--src is required")
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return usagef("--src %s is not a folder", src)
	}
	limits, err := readLimits(c)
	if err != nil {
		return err
	}
	res, err := exporter.Validate(afero.NewOsFs(), src, limits)
	if err != nil {
		return err
	}
	if c.Bool("schema") {
		res = withSchemaProblems(res, src)
	}
	rejected := printProblems(e.stderr, res)
	fmt.Fprintf(e.stdout, "%d bundles checked, %d rejected\n", len(res), rejected)
	if rejected > 0 {
		return fmt.Errorf("%d bundle(s) rejected", rejected)
	}
	return nil
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
