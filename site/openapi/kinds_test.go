package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
)

// TestMediaURLsListDocumentKinds checks that the MediaURLs schema has
// exactly the keys of site.DocumentKinds, an array for floor page kinds
// and a string for the others, and says public or private as the table
// does: the OpenAPI document cannot drift from the table.
func TestMediaURLsListDocumentKinds(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["MediaURLs"].Properties
	var got, want []string
	for k := range props {
		got = append(got, k)
	}
	for _, k := range site.DocumentKinds {
		want = append(want, k.Key)
		p, ok := props[k.Key]
		if !ok {
			continue
		}
		wantType := "string"
		if k.FloorPages {
			wantType = "array"
		}
		if p.Type != wantType {
			t.Errorf("%s: type %v, want %s", k.Key, p.Type, wantType)
		}
		visibility := "Private"
		if k.Public {
			visibility = "Public."
		}
		if !strings.Contains(p.Description, visibility) {
			t.Errorf("%s: description %q does not say %s", k.Key, p.Description, visibility)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("MediaURLs keys %v, want the document kinds %v", got, want)
	}
}
