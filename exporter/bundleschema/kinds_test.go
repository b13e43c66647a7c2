package bundleschema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/site"
)

// TestSchemaListsDocumentKinds checks that the documents of one language
// in the schema have exactly the keys of site.DocumentKinds, a list for
// floor page kinds and a path for the others, and say public or private
// as the table does: the schema cannot drift from the table.
func TestSchemaListsDocumentKinds(t *testing.T) {
	var s struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Type        any    `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatal(err)
	}
	props := s.Defs["documents"].Properties
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
		isList := strings.Contains(strings.ToLower(toString(p.Type)), "array")
		if isList != k.FloorPages {
			t.Errorf("%s: schema type %v, kind lists floor pages: %v", k.Key, p.Type, k.FloorPages)
		}
		visibility := "(private)"
		if k.Public {
			visibility = "(public)"
		}
		if !strings.Contains(p.Description, visibility) {
			t.Errorf("%s: description %q does not say %s", k.Key, p.Description, visibility)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("schema document keys %v, want the document kinds %v", got, want)
	}
}

func toString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
