package exporter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// strictCounts is what RESO's certification tool reports in strict mode
// (no field outside the dictionary allowed), counted as it counts: each
// occurrence of a field the dictionary does not define for its resource,
// each occurrence of a lookup value that is not an OData name of its
// lookup (the tool accepts no display form).
type strictCounts struct {
	rooms  int
	fields map[string]int // field name -> occurrences
	values map[[2]string]int
	// display counts the values that are the lookup's display form
	// (StandardName) of a dictionary value, by lookup.
	display map[string]int
}

func (c *strictCounts) walk(d *resoDict, resource string, obj map[string]any) {
	for k, v := range obj {
		f, ok := d.fields[resource][k]
		switch {
		case !ok:
			c.fields[k]++
		case f.IsCollection && (f.Type == "org.reso.metadata.Media" || f.Type == "org.reso.metadata.PropertyRooms"):
			res := strings.TrimPrefix(f.Type, "org.reso.metadata.")
			for _, el := range v.([]any) {
				if res == "PropertyRooms" {
					c.rooms++
				}
				c.walk(d, res, el.(map[string]any))
			}
		case strings.HasPrefix(f.Type, enumPrefix):
			s, _ := v.(string)
			if d.odata[f.Type][s] {
				continue
			}
			name := strings.TrimPrefix(f.Type, enumPrefix)
			c.values[[2]string{name, s}]++
			if d.lookups[f.Type][s] {
				c.display[name]++
			}
		}
	}
}

func (c *strictCounts) sumFields(names ...string) (n int) {
	for _, k := range names {
		n += c.fields[k]
	}
	return n
}

func (c *strictCounts) sumValues(lookup string) (n int) {
	for k, v := range c.values {
		if k[0] == lookup {
			n += v
		}
	}
	return n
}

// thousands writes n with a comma between thousands, as the docs do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestResoStrictCounts derives from the samples' autofill documents (the
// golden tree's, what export writes from fixtures/bundles) what RESO's
// certification tool reports in strict mode, with the dictionary's
// metadata, and checks each figure docs/documents.md gives, so that they
// follow the samples. Counted this way, the samples the tool was run on
// (2026-11-26) give its 805 fields and 433 values exactly.
func TestResoStrictCounts(t *testing.T) {
	d := loadResoDict(t)
	docs, err := filepath.Glob(filepath.Join("..", "fixtures", "golden", "public", "*", "reso", "autofill"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no golden autofill documents: %v", err)
	}
	c := &strictCounts{fields: map[string]int{}, values: map[[2]string]int{}, display: map[string]int{}}
	for _, p := range docs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var doc struct{ Value []map[string]any }
		if err := dec.Decode(&doc); err != nil || len(doc.Value) != 1 {
			t.Fatalf("%s: %v", p, err)
		}
		c.walk(d, "Property", doc.Value[0])
	}
	roomFields := c.sumFields(resoLocalFields["PropertyRooms"]...)
	allFields := c.sumFields(resoLocalFields["Property"]...) + roomFields
	var fields, values, display int
	for _, n := range c.fields {
		fields += n
	}
	for _, n := range c.values {
		values += n
	}
	for _, n := range c.display {
		display += n
	}
	if allFields != fields {
		t.Errorf("%d fields outside the dictionary, %d of them in resoLocalFields: the docs' families miss some", fields, allFields)
	}
	want := []string{
		fmt.Sprintf("(the %d views and aliases", len(docs)),
		fmt.Sprintf("%s rooms", thousands(c.rooms)),
		fmt.Sprintf("reports **%s errors**", thousands(fields+values)),
		fmt.Sprintf("**%s fields that are not in Data Dictionary 1.7**", thousands(fields)),
		fmt.Sprintf("`RoomLengthWidthSource` (%s)", thousands(roomFields)),
		fmt.Sprintf("`...Source` (%s)", thousands(fields-roomFields-c.fields["xSvcStructures"])),
		fmt.Sprintf("`xSvcStructures` (%s)", thousands(c.fields["xSvcStructures"])),
		fmt.Sprintf("**%s lookup values the tool does not accept.** %s are in the dictionary's display form", thousands(values), thousands(display)),
		fmt.Sprintf("`Square Meters` (%s,", thousands(c.display["AreaUnits"])),
		fmt.Sprintf("`Floor Plan` (%s)", thousands(c.display["MediaCategory"])),
		fmt.Sprintf("`png` (%s,", thousands(c.display["MediaType"])),
		fmt.Sprintf("The other %s are values", thousands(values-display)),
		fmt.Sprintf("every `...Source` (%s)", thousands(c.sumValues("AreaSource"))),
		fmt.Sprintf("`ColdRoom`…: %s)", thousands(c.sumValues("RoomType"))),
		fmt.Sprintf("city names (%s)", thousands(c.sumValues("City"))),
		fmt.Sprintf("(`totalErrors`: %d)", fields+values),
	}
	if n := display + c.sumValues("AreaSource") + c.sumValues("RoomType") + c.sumValues("City"); n != values {
		t.Errorf("%d lookup values refused, the docs' kinds account for %d: %v", values, n, c.values)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "documents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## RESO's certification tool\n")
	section, _, _ = strings.Cut(section, "\n## ")
	text := strings.Join(strings.Fields(section), " ")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("docs/documents.md's RESO section does not say %q (the samples' count)", w)
		}
	}
}
