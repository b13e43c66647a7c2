package write

import "testing"

func TestCheckPath(t *testing.T) {
	for _, p := range []string{"", "/abs", "a/../b", "../a", "a//b", "a/./b", ".hidden", "a/.tmp-1", `a\b`, "a/"} {
		if checkPath(p) == nil {
			t.Errorf("checkPath(%q) accepted", p)
		}
	}
	for _, p := range []string{"a", "vX/data/status", "guides/g1/doc/en/pdfMetric.pdf"} {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q): %v", p, err)
		}
	}
}
