package site

import "testing"

// TestSurrogateKeyOf: every file of a public id, its pages in every
// form and its compressed siblings carry the id's key; the stylesheet
// and the sidecar's routes carry none.
func TestSurrogateKeyOf(t *testing.T) {
	for p, want := range map[string]string{
		"vKT301A/data/status":                    "guidepub-vKT301A",
		"/vKT301A/data/summary.br":               "guidepub-vKT301A",
		"vKT301A/doc/photos/ph-1.jpg":            "guidepub-vKT301A",
		"/vKT301A":                               "guidepub-vKT301A",
		"u/vKT301A/fr/index.html":                "guidepub-vKT301A",
		"/embed/king-st":                         "guidepub-king-st",
		"king-st/index.html":                     "guidepub-king-st",
		AssetsDir + "/view.0123456789abcdef.css": "",
		"/api/v1/guides":                         "",
		"/private/g1/doc.zip":                    "",
		"/oauth/token":                           "",
		"":                                       "",
	} {
		got, ok := SurrogateKeyOf(p)
		if got != want || ok != (want != "") {
			t.Errorf("SurrogateKeyOf(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
}
