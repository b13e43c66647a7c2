package exporter

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guidepub/guidepub/site"
)

// resoMetadata is the RESO Data Dictionary 1.7 metadata report, as copied
// into the repository (gzipped: it is most of fixtures/ otherwise).
var resoMetadata = filepath.Join("..", "fixtures", "reso", "dd-1.7-metadata-report.json.gz")

// resoLocalFields are the autofill fields that RESO DD 1.7 does not define,
// by resource. TestResoLocalFieldsAreLocal checks that each truly is absent
// from the dictionary, so this list cannot hide a dictionary field.
var resoLocalFields = map[string][]string{
	"Property": {
		"xSvcStructures",
		"AboveGradeInteriorArea", "AboveGradeInteriorAreaUnits", "AboveGradeInteriorAreaSource",
		"BelowGradeInteriorArea", "BelowGradeInteriorAreaUnits", "BelowGradeInteriorAreaSource",
		"AboveGradeExteriorArea", "AboveGradeExteriorAreaUnits", "AboveGradeExteriorAreaSource",
		"BelowGradeExteriorArea", "BelowGradeExteriorAreaUnits", "BelowGradeExteriorAreaSource",
		"AboveGradeExcludedArea", "AboveGradeExcludedAreaUnits", "AboveGradeExcludedAreaSource",
		"BelowGradeExcludedArea", "BelowGradeExcludedAreaUnits", "BelowGradeExcludedAreaSource",
		"AboveGradeUnfinishedArea", "AboveGradeUnfinishedAreaUnits", "AboveGradeUnfinishedAreaSource",
		"BelowGradeUnfinishedArea", "BelowGradeUnfinishedAreaUnits", "BelowGradeUnfinishedAreaSource",
		"PerimeterWallThickness", "PerimeterWallThicknessUnits", "PerimeterWallThicknessSource",
	},
	"PropertyRooms": {"FloorKey", "FloorName", "StructureKey", "RoomName", "RoomLevel", "RoomLengthWidthSource"},
	"Media":         {},
}

// resoOpenLookups are lookups whose values may be local: the source
// constant (AreaSource), city names, and the service's room types (see docs/documents.md#autofill:
// Garage, Storage, Stairs... are not in the dictionary's RoomType).
var resoOpenLookups = []string{"AreaSource", "City", "RoomType"}

type resoField struct {
	Type         string `json:"type"`
	MaxLength    int    `json:"maxLength"`
	Scale        *int   `json:"scale"`
	Precision    *int   `json:"precision"`
	IsCollection bool   `json:"isCollection"`
}

// resoDict is the part of the metadata report the validator needs.
type resoDict struct {
	fields  map[string]map[string]resoField // resource -> field
	lookups map[string]map[string]bool      // lookup name -> value or standard name
	odata   map[string]map[string]bool      // lookup name -> value (its OData name)
}

func loadResoDict(t testing.TB) *resoDict {
	t.Helper()
	f, err := os.Open(resoMetadata)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Fields []struct {
			ResourceName string `json:"resourceName"`
			FieldName    string `json:"fieldName"`
			resoField
		} `json:"fields"`
		Lookups []struct {
			LookupName  string `json:"lookupName"`
			LookupValue string `json:"lookupValue"`
			Annotations []struct {
				Term  string `json:"term"`
				Value string `json:"value"`
			} `json:"annotations"`
		} `json:"lookups"`
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	d := &resoDict{fields: map[string]map[string]resoField{}, lookups: map[string]map[string]bool{}, odata: map[string]map[string]bool{}}
	for _, f := range report.Fields {
		if d.fields[f.ResourceName] == nil {
			d.fields[f.ResourceName] = map[string]resoField{}
		}
		d.fields[f.ResourceName][f.FieldName] = f.resoField
	}
	for _, l := range report.Lookups {
		if d.lookups[l.LookupName] == nil {
			d.lookups[l.LookupName] = map[string]bool{}
		}
		d.lookups[l.LookupName][l.LookupValue] = true
		if d.odata[l.LookupName] == nil {
			d.odata[l.LookupName] = map[string]bool{}
		}
		d.odata[l.LookupName][l.LookupValue] = true
		for _, a := range l.Annotations {
			if a.Term == "RESO.OData.Metadata.StandardName" {
				d.lookups[l.LookupName][a.Value] = true
			}
		}
	}
	return d
}

const enumPrefix = "org.reso.metadata.enums."

// checkObject validates the fields of obj as a record of resource and
// returns one message per problem, each starting with the JSON path.
func (d *resoDict) checkObject(resource string, obj map[string]any, path string) []string {
	var problems []string
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "." + k
		if slices.Contains(resoLocalFields[resource], k) {
			continue
		}
		f, ok := d.fields[resource][k]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not a DD 1.7 field of %s", p, resource))
			continue
		}
		problems = append(problems, d.checkValue(f, obj[k], p)...)
	}
	return problems
}

// checkValue validates one value against its dictionary field.
func (d *resoDict) checkValue(f resoField, v any, p string) []string {
	bad := func(format string, a ...any) []string { return []string{p + ": " + fmt.Sprintf(format, a...)} }
	switch {
	case f.IsCollection && (f.Type == "org.reso.metadata.Media" || f.Type == "org.reso.metadata.PropertyRooms"):
		arr, ok := v.([]any)
		if !ok {
			return bad("want an array for %s", f.Type)
		}
		var problems []string
		for i, el := range arr {
			obj, ok := el.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s[%d]: want an object", p, i))
				continue
			}
			problems = append(problems, d.checkObject(strings.TrimPrefix(f.Type, "org.reso.metadata."), obj, fmt.Sprintf("%s[%d]", p, i))...)
		}
		return problems
	case f.Type == "Edm.String":
		s, ok := v.(string)
		if !ok {
			return bad("want a string, got %T", v)
		}
		if f.MaxLength > 0 && utf8.RuneCountInString(s) > f.MaxLength {
			return bad("%d characters, more than maxLength %d", utf8.RuneCountInString(s), f.MaxLength)
		}
	case f.Type == "Edm.Decimal":
		n, ok := v.(json.Number)
		if !ok {
			return bad("want a number, got %T", v)
		}
		s := strings.TrimPrefix(n.String(), "-")
		if strings.ContainsAny(s, "eE") {
			return bad("number %s in exponent form", s)
		}
		intPart, frac, _ := strings.Cut(s, ".")
		if f.Scale != nil && len(frac) > *f.Scale {
			return bad("%s has more than %d decimals", n, *f.Scale)
		}
		if f.Precision != nil && len(strings.TrimLeft(intPart, "0"))+len(frac) > *f.Precision {
			return bad("%s has more than %d digits", n, *f.Precision)
		}
	case strings.HasPrefix(f.Type, "Edm.Int"):
		n, ok := v.(json.Number)
		if !ok {
			return bad("want an integer, got %T", v)
		}
		if _, err := n.Int64(); err != nil {
			return bad("want an integer, got %s", n)
		}
	case f.Type == "Edm.Boolean":
		if _, ok := v.(bool); !ok {
			return bad("want a boolean, got %T", v)
		}
	case strings.HasPrefix(f.Type, enumPrefix):
		s, ok := v.(string)
		if !ok {
			return bad("want a string of lookup %s, got %T", f.Type, v)
		}
		name := strings.TrimPrefix(f.Type, enumPrefix)
		if !slices.Contains(resoOpenLookups, name) && !d.lookups[f.Type][s] {
			return bad("%q is not a value of lookup %s", s, name)
		}
	default:
		return bad("field type %s is not handled by this validator", f.Type)
	}
	return nil
}

// checkAutofill validates a whole autofill document.
func (d *resoDict) checkAutofill(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var problems []string
	if doc["@reso.context"] != site.ResoContext {
		problems = append(problems, fmt.Sprintf("@reso.context is %v, want %s", doc["@reso.context"], site.ResoContext))
	}
	if len(doc) != 2 {
		problems = append(problems, fmt.Sprintf("want exactly @reso.context and value, got %d keys", len(doc)))
	}
	value, ok := doc["value"].([]any)
	if !ok || len(value) != 1 {
		return append(problems, "value must hold exactly one object")
	}
	obj, ok := value[0].(map[string]any)
	if !ok {
		return append(problems, "value[0] is not an object")
	}
	return append(problems, d.checkObject("Property", obj, "$.value[0]")...)
}

// TestResoAutofill validates every exported autofill document against the
// RESO Data Dictionary 1.7 metadata.
func TestResoAutofill(t *testing.T) {
	d := loadResoDict(t)
	ev := newEnv(t, fsKinds[0])
	ev.exportAll()
	pub := snapshot(t, ev.out, ev.outDir)
	n := 0
	for _, name := range sortedNames(pub) {
		if !strings.HasSuffix(name, "/"+site.AutofillFile) {
			continue
		}
		n++
		for _, p := range d.checkAutofill(pub[name]) {
			t.Errorf("%s: %s", name, p)
		}
	}
	if n == 0 {
		t.Fatal("no autofill document exported")
	}
}

// TestResoValidatorCatches shows the validator fails on wrong documents.
func TestResoValidatorCatches(t *testing.T) {
	d := loadResoDict(t)
	ok := `{"@reso.context":"` + site.ResoContext + `","value":[{"Country":"CA","Rooms":[{"RoomArea":12.5,"RoomAreaUnits":"Square Feet","RoomType":"Garage"}],"Media":[{"MediaCategory":"Photo","ImageWidth":10}]}]}`
	if p := d.checkAutofill([]byte(ok)); len(p) > 0 {
		t.Fatalf("valid document rejected: %v", p)
	}
	tests := []struct {
		name, doc, want string
	}{
		{"wrong unit", `{"Rooms":[{"RoomAreaUnits":"sqft"}]}`, `"sqft" is not a value of lookup AreaUnits`},
		{"three decimals", `{"Rooms":[{"RoomArea":12.345}]}`, "more than 2 decimals"},
		{"string for number", `{"Rooms":[{"RoomArea":"12"}]}`, "want a number"},
		{"unknown field", `{"LivingAreaMM2":1}`, "not a DD 1.7 field of Property"},
		{"bad country", `{"Country":"Canada"}`, "lookup Country"},
		{"too long", `{"PostalCode":"12345678901"}`, "maxLength 10"},
		{"non-integer width", `{"Media":[{"ImageWidth":1.5}]}`, "want an integer"},
		{"bad category", `{"Media":[{"MediaCategory":"Hologram"}]}`, "lookup MediaCategory"},
		{"bool as string", `{"Media":[{"PreferredPhotoYN":"true"}]}`, "want a boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := `{"@reso.context":"` + site.ResoContext + `","value":[` + tc.doc + `]}`
			p := d.checkAutofill([]byte(doc))
			if len(p) == 0 || !strings.Contains(strings.Join(p, "\n"), tc.want) {
				t.Fatalf("problems %v, want one containing %q", p, tc.want)
			}
		})
	}
	if p := d.checkAutofill([]byte(`{"@reso.context":"urn:other","value":[{}]}`)); len(p) == 0 {
		t.Fatal("wrong @reso.context accepted")
	}
}

// TestResoLocalFieldsAreLocal checks that every field the validator lets
// through as local is really absent from DD 1.7.
func TestResoLocalFieldsAreLocal(t *testing.T) {
	d := loadResoDict(t)
	for res, fields := range resoLocalFields {
		for _, f := range fields {
			if _, ok := d.fields[res][f]; ok {
				t.Errorf("%s.%s is a DD 1.7 field; validate it instead of listing it as local", res, f)
			}
		}
	}
}
