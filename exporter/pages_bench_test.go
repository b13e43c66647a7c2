package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/procstat"
)

// BenchmarkPageLanguages measures the first export of one sample guide
// (301-king-st-e: two views, both ready) into an empty tree, with its
// documents in 1 and in 5 languages (the French PDFs copied to es, it and
// zh): each language adds the three pages of every view and of the alias.
// It reports the process CPU time per export and the bytes of the pages'
// brotli siblings (pages-br-B), and of the shared files they link
// (shared-br-B: the stylesheet, once per tree), the figures of
// docs/benchmarks.md#view-page-bytes-and-export-cpu.
func BenchmarkPageLanguages(b *testing.B) {
	for _, langs := range []int{1, 5} {
		b.Run(fmt.Sprintf("langs=%d", langs), func(b *testing.B) {
			src := afero.NewMemMapFs()
			copyFixtures(b, src, "/src")
			setLanguages(b, src, filepath.Join("/src", kingFolder, "guide.json"), langs)
			ctx := context.Background()
			var pagesBr, sharedBr int
			b.ResetTimer()
			cpu := procstat.CPUTime()
			for i := 0; i < b.N; i++ {
				out := afero.NewMemMapFs()
				cfg := testConfig(src, "/src", "/out", "/private")
				cfg.Out, cfg.Private = out, out
				e, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if res, err := e.ExportBundle(ctx, kingFolder); err != nil || res.Err != nil {
					b.Fatalf("export: %v %v", err, res.Err)
				}
				if i == 0 {
					b.StopTimer()
					pagesBr, sharedBr = brotliBytes(b, out, "/out")
					b.StartTimer()
				}
			}
			b.ReportMetric(float64((procstat.CPUTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(pagesBr), "pages-br-B")
			b.ReportMetric(float64(sharedBr), "shared-br-B")
		})
	}
}

// setLanguages rewrites the guide.json at p so that its documents are in
// the first n of en, fr, es, it and zh (the languages after en copy fr's).
func setLanguages(b *testing.B, fsys afero.Fs, p string, n int) {
	b.Helper()
	data, err := afero.ReadFile(fsys, p)
	if err != nil {
		b.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		b.Fatal(err)
	}
	docs := g["media"].(map[string]any)["documents"].(map[string]any)
	fr := docs["fr"]
	for i, lang := range []string{"en", "fr", "es", "it", "zh"} {
		switch {
		case i >= n:
			delete(docs, lang)
		case lang != "en":
			docs[lang] = fr
		}
	}
	out, err := json.Marshal(g)
	if err != nil {
		b.Fatal(err)
	}
	if err := afero.WriteFile(fsys, p, out, 0o644); err != nil {
		b.Fatal(err)
	}
}

// brotliBytes sums the brotli siblings under dir: of the view pages, and
// of the other files (the shared stylesheet).
func brotliBytes(b *testing.B, fsys afero.Fs, dir string) (pages, shared int) {
	b.Helper()
	for name, data := range snapshot(b, fsys, dir) {
		doc, enc, ok := site.SplitEncoded(name)
		switch {
		case !ok || enc.Name != site.Brotli.Name:
		case strings.HasSuffix(doc, "/"+site.PageFile):
			pages += len(data)
		case !strings.Contains(doc, "/data/") && !strings.Contains(doc, "/reso/"):
			shared += len(data)
		}
	}
	return pages, shared
}
