// Package bundletest loads the sample bundles of fixtures/bundles for
// tests.
package bundletest

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// Load loads the sample bundle folder from a memory file system holding
// it at /src/<folder>, failing t when it cannot.
func Load(t testing.TB, folder string) *bundle.Bundle {
	t.Helper()
	fsys := afero.NewMemMapFs()
	root := path.Join("bundles", folder)
	err := fs.WalkDir(fixtures.Bundles, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		return afero.WriteFile(fsys, "/src/"+strings.TrimPrefix(p, "bundles/"), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Load(fsys, "/src/"+folder)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
