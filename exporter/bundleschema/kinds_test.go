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

// TestSchemaListsPlanKinds checks that a view's plans take exactly the
// floor plan kinds (site.IsPlanKind), each as documents have it, in the
// languages.
func TestSchemaListsPlanKinds(t *testing.T) {
	type schema struct {
		Ref        string            `json:"$ref"`
		Properties map[string]schema `json:"properties"`
	}
	var raw struct {
		Defs map[string]schema `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &raw); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for k, p := range raw.Defs["plans"].Properties {
		got = append(got, k)
		if p.Ref != "#/$defs/documents/properties/"+k {
			t.Errorf("plans.%s refers to %q, not to documents' %s", k, p.Ref, k)
		}
	}
	for _, k := range site.DocumentKinds {
		if site.IsPlanKind(k.Key) {
			want = append(want, k.Key)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("schema plan keys %v, want the plan kinds %v", got, want)
	}
	var langs []string
	for l := range raw.Defs["view"].Properties["plans"].Properties {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	if want := slices.Sorted(slices.Values(site.Languages)); !slices.Equal(langs, want) {
		t.Errorf("schema plan languages %v, want %v", langs, want)
	}
}
