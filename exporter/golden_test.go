package exporter

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
)

var update = flag.Bool("update", false, "rewrite the golden files in fixtures/golden")

// goldenDir holds the expected output of exporting the fixture bundles:
// public/<viewId>/... documents, private/guides/<guideId>/{event,record}.json,
// and files.txt listing every file of both trees.
var goldenDir = filepath.Join("..", "fixtures", "golden")

// goldenFiles returns what the golden files should hold for an export of
// the fixtures: the identity documents, the private event and record
// files, and the listing of every file.
func goldenFiles(t *testing.T, pub, priv map[string][]byte) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	var listing bytes.Buffer
	for _, name := range sortedNames(pub) {
		listing.WriteString("public/" + name + "\n")
		if site.IsDocument(name) {
			got["public/"+name] = pub[name]
		}
	}
	for _, name := range sortedNames(priv) {
		listing.WriteString("private/" + name + "\n")
		if strings.HasSuffix(name, "/"+site.EventFile) || strings.HasSuffix(name, "/"+site.RecordFile) {
			got["private/"+name] = priv[name]
		}
	}
	got["files.txt"] = listing.Bytes()
	return got
}

// readGolden returns every file under goldenDir by slash path.
func readGolden(t *testing.T) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	err := filepath.WalkDir(goldenDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(goldenDir, p)
		want[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return want
}

func writeGolden(t *testing.T, got map[string][]byte) {
	t.Helper()
	if err := os.RemoveAll(goldenDir); err != nil {
		t.Fatal(err)
	}
	for name, data := range got {
		p := filepath.Join(goldenDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGolden exports every fixture bundle with a fixed clock and fixed URLs
// and compares the documents, the private event and record files and the
// list of every published file with fixtures/golden (rewrite with
// go test ./exporter/... -update). Every compressed sibling must decode to
// its document.
func TestGolden(t *testing.T) {
	for _, kind := range fsKinds {
		t.Run(kind.name, func(t *testing.T) {
			ev := newEnv(t, kind)
			rep := ev.exportAll()
			if rep.Rejected != 0 {
				t.Fatalf("fixtures rejected: %+v", rep.Guides)
			}
			pub := snapshot(t, ev.out, ev.outDir)
			priv := snapshot(t, ev.out, ev.privDir)
			for name, data := range pub {
				if !site.IsDocument(name) {
					continue
				}
				for _, enc := range site.Encodings {
					z, ok := pub[name+enc.Ext]
					if !ok {
						t.Errorf("%s: no %s sibling", name, enc.Ext)
						continue
					}
					plain, err := decompress(enc, z)
					if err != nil || !bytes.Equal(plain, data) {
						t.Errorf("%s%s does not decode to the document (err %v)", name, enc.Ext, err)
					}
				}
			}
			got := goldenFiles(t, pub, priv)
			if *update && kind.name == "mem" {
				writeGolden(t, got)
				return
			}
			want := readGolden(t)
			for _, name := range sortedNames(want) {
				if _, ok := got[name]; !ok {
					t.Errorf("%s: in the golden files but not exported", name)
				}
			}
			for _, name := range sortedNames(got) {
				w, ok := want[name]
				switch {
				case !ok:
					t.Errorf("%s: exported but not in the golden files (run go test ./exporter/... -update)", name)
				case !bytes.Equal(w, got[name]):
					t.Errorf("%s differs from the golden file (- golden, + exported):\n%s", name, lineDiff(w, got[name]))
				}
			}
		})
	}
}
