package bundle_test

import (
	"io/fs"
	"path"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// BenchmarkParse measures decoding and validating the largest sample
// guide.json (301-king-st-e, about 20 KB).
func BenchmarkParse(b *testing.B) {
	data, err := fs.ReadFile(fixtures.Bundles, path.Join("bundles", "301-king-st-e", bundle.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := bundle.Parse(data); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// BenchmarkLoad measures loading the sample bundle 301-king-st-e from
// disk: guide.json plus the checks of the 16 files it names.
func BenchmarkLoad(b *testing.B) {
	fsys := afero.NewOsFs()
	dir := path.Join(fixtures.BundlesDir(), "301-king-st-e")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bundle.Load(fsys, dir); err != nil {
			b.Fatal(err)
		}
	}
}
