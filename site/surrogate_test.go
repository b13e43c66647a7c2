package site

import (
	"maps"
	"slices"
	"testing"
	"time"
)

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

// TestFileHeaders: with no edge TTL a file gets Cache-Control as before
// and its key; with one, the max-age for the edge in Surrogate-Control,
// CDN-Cache-Control and s-maxage, the browser's max-age unchanged; the
// stylesheet, which has no key, never gets an edge TTL.
func TestFileHeaders(t *testing.T) {
	key := func(k string) []Header {
		return []Header{{"xkey", k}, {"Surrogate-Key", k}, {"Cache-Tag", k}}
	}
	css := AssetsDir + "/view.0123456789abcdef.css"
	for _, tc := range []struct {
		p    string
		ttl  time.Duration
		want []Header
		md   map[string]string
	}{
		{"vKT301A/data/status", 0, append([]Header{{"Cache-Control", DocumentCacheControl}}, key("guidepub-vKT301A")...),
			map[string]string{"surrogate-key": "guidepub-vKT301A"}},
		{"vKT301A/data/status", 500 * time.Millisecond, append([]Header{{"Cache-Control", DocumentCacheControl}}, key("guidepub-vKT301A")...),
			map[string]string{"surrogate-key": "guidepub-vKT301A"}},
		{"u/king-st/fr/index.html", 24 * time.Hour, append([]Header{
			{"Cache-Control", DocumentCacheControl + ", s-maxage=86400"},
			{"Surrogate-Control", "max-age=86400"}, {"CDN-Cache-Control", "max-age=86400"}}, key("guidepub-king-st")...),
			map[string]string{"surrogate-key": "guidepub-king-st", "surrogate-control": "max-age=86400"}},
		{"vKT301A/doc/ph-1.jpg", 90*time.Second + 999*time.Millisecond, append([]Header{
			{"Cache-Control", MediaCacheControl + ", s-maxage=90"},
			{"Surrogate-Control", "max-age=90"}, {"CDN-Cache-Control", "max-age=90"}}, key("guidepub-vKT301A")...),
			map[string]string{"surrogate-key": "guidepub-vKT301A", "surrogate-control": "max-age=90"}},
		{css, time.Hour, []Header{{"Cache-Control", ImmutableCacheControl}}, map[string]string{}},
	} {
		if got := FileHeaders(tc.p, tc.ttl); !slices.Equal(got, tc.want) {
			t.Errorf("FileHeaders(%q, %s) = %q, want %q", tc.p, tc.ttl, got, tc.want)
		}
		if got := ObjectMetadata(tc.p, tc.ttl); !maps.Equal(got, tc.md) {
			t.Errorf("ObjectMetadata(%q, %s) = %q, want %q", tc.p, tc.ttl, got, tc.md)
		}
	}
}
