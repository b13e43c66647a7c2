package viewpage

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden pages under testdata/golden")

// TestGolden renders the three pages of every sample view and alias, in
// every language, and compares them with
// testdata/golden/<folder>/<kind>[.<lang>].html (-update rewrites
// them). Rendering twice must give the same bytes.
func TestGolden(t *testing.T) {
	ss := samples(t)
	if len(ss) < 10 {
		t.Fatalf("only %d sample views found", len(ss))
	}
	for _, s := range ss {
		for _, lang := range s.Input.Languages {
			for _, k := range Kinds {
				name := k.String()
				if lang != s.Input.Default() {
					name += "." + lang
				}
				t.Run(s.Folder+"/"+name, func(t *testing.T) {
					got, err := Render(k, &s.Input, lang)
					if err != nil {
						t.Fatal(err)
					}
					again, _ := Render(k, &s.Input, lang)
					if !bytes.Equal(got, again) {
						t.Fatal("two renders differ")
					}
					p := filepath.Join("testdata", "golden", s.Folder, name+".html")
					if *update {
						if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(p, got, 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(p)
					if err != nil {
						t.Fatalf("%v (run go test -update)", err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s differs from the golden file (run go test -update and review the diff)", p)
					}
				})
			}
		}
	}
}
