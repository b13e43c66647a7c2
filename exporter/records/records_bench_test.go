package records

import (
	"fmt"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// BenchmarkOpenRecords measures OpenRecords over n records on the real file
// system, each as large as a generated two-view guide's (40 public files):
// what an Exporter reads at start before it can export anything.
func BenchmarkOpenRecords(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("guides=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			fsys := afero.NewOsFs()
			r, err := OpenRecords(fsys, dir, 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				id := fmt.Sprintf("gREC%06d", i)
				mg := site.ManifestGuide{Folder: fmt.Sprintf("guide-%06d", i), Revision: "r", Ids: []string{id + "A", id + "B", "alias-" + id},
					Private: []string{"guides/" + id + "/record.json"}, Source: "s", Inputs: []string{"doc/a.jpg"}, Views: 2, Ready: true}
				var public []PublicFile
				for j := range 40 {
					p := fmt.Sprintf("%sA/doc/photos/p%02d.jpg", id, j)
					mg.Files = append(mg.Files, p)
					public = append(public, PublicFile{Path: p, SHA256: fmt.Sprintf("%064x", j), Size: 1024, ModTime: 1_700_000_000_000_000_000})
				}
				if err := r.write(newRecord(id, mg, public)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				r, err := OpenRecords(fsys, dir, 0, 0)
				if err != nil || r.Len() != n {
					b.Fatalf("OpenRecords: %v, %d records", err, r.Len())
				}
			}
		})
	}
}
