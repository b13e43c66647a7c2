package bundle_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/fixtures"
)

// FuzzParseBundle checks that Parse never panics, that every problem says
// something, and that an accepted guide encodes and parses again to an
// equal guide.
func FuzzParseBundle(f *testing.F) {
	entries, err := fs.ReadDir(fixtures.Bundles, "bundles")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(fixtures.Bundles, path.Join("bundles", e.Name(), bundle.FileName))
		if err != nil {
			f.Fatal(err)
		}
		// Compact: the fuzzer minimizes every new input it finds, in time
		// that grows with the input's size.
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			f.Fatal(err)
		}
		f.Add(compact.Bytes())
	}
	f.Add([]byte(baseGuide))
	for _, tc := range badGuides(f) {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, problems := bundle.Parse(data)
		for _, p := range problems {
			if p.Message == "" || p.File != "" {
				t.Fatalf("bad problem %#v", p)
			}
		}
		if g == nil {
			if len(problems) != 1 {
				t.Fatalf("no guide and %d problems", len(problems))
			}
			return
		}
		if len(problems) > 0 {
			return
		}
		again, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("accepted guide does not encode: %v", err)
		}
		g2, problems2 := bundle.Parse(again)
		if len(problems2) > 0 {
			t.Fatalf("re-encoded guide rejected: %v\n%s", problems2, again)
		}
		if !reflect.DeepEqual(g, g2) {
			t.Fatalf("re-encoded guide differs:\n%#v\n%#v", g, g2)
		}
	})
}
