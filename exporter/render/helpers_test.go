package render

import (
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// testNow is the fixed time of the tests: after the fixtures' 2020 expiry,
// before their 2099 one.
var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// loadFixture loads the sample bundle folder (of fixtures/bundles) from a
// memory file system.
func loadFixture(t *testing.T, folder string) *bundle.Bundle {
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
