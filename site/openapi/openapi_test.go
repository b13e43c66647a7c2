package openapi

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/guidepub/guidepub/site"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(Document())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc := load(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

func TestDocumentReturnsACopy(t *testing.T) {
	a := Document()
	a[0] = 'x'
	if b := Document(); b[0] != '{' {
		t.Fatalf("Document shares its bytes with callers")
	}
}

// TestEveryOperationListed pins the operations the document must describe,
// so none is dropped by an edit.
func TestEveryOperationListed(t *testing.T) {
	doc := load(t)
	want := []string{
		"GET /.well-known/oauth-authorization-server",
		"GET /api/v1/guides/{guideId}/events/deliveries",
		"GET /api/v1/guides/{guideId}/events/{eventType}/object",
		"GET /api/v1/openapi.json",
		"GET /healthz",
		"GET /metrics",
		"GET /oauth/authorize",
		"GET /oauth/signin",
		"GET /private/{guideId}/{path}",
		"GET /readyz",
		"GET /{viewId}/data/status",
		"GET /{viewId}/data/summary",
		"GET /{viewId}/reso/autofill",
		"HEAD /private/{guideId}/{path}",
		"HEAD /{viewId}/data/status",
		"HEAD /{viewId}/data/summary",
		"HEAD /{viewId}/reso/autofill",
		"POST /api/v1/guides/{guideId}/events/deliveries/{deliveryId}/retry",
		"POST /api/v1/guides/{guideId}/events/{eventType}/dispatch",
		"POST /api/v1/integrations/test",
		"POST /oauth/authorize",
		"POST /oauth/revoke",
		"POST /oauth/signin",
		"POST /oauth/token",
	}
	var got []string
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			got = append(got, m+" "+p)
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s: operationId and summary are required", m, p)
			}
			// Every operation says what it needs (an empty list: nothing).
			if op.Security == nil {
				t.Errorf("%s %s: no security requirement", m, p)
			}
			if strings.HasPrefix(p, "/api/v1/") && p != Path {
				if op.Security == nil || len(*op.Security) != 2 || len((*op.Security)[0]) != 2 || (*op.Security)[1]["bearer"] == nil {
					t.Errorf("%s %s: want the two credential headers, or a bearer token, as its security", m, p)
				}
				for _, code := range []string{"400", "401", "429"} {
					if op.Responses.Value(code) == nil {
						t.Errorf("%s %s: no %s response", m, p, code)
					}
				}
			}
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("operations:\n got %q\nwant %q", got, want)
	}
	schemes := doc.Components.SecuritySchemes
	for name, header := range map[string]string{"appId": "X-Svc-App-Id", "appToken": "X-Svc-App-Token"} {
		s := schemes[name]
		if s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != header {
			t.Errorf("security scheme %s: want apiKey header %s", name, header)
		}
	}
	if b := schemes["bearer"]; b == nil || b.Value.Type != "http" || b.Value.Scheme != "bearer" {
		t.Error("security scheme bearer: want http bearer (RFC 6750)")
	}
	for _, hook := range doc.Webhooks {
		for m, op := range hook.Operations() {
			if op.Security == nil {
				t.Errorf("webhook %s %s: no security requirement", m, op.OperationID)
			}
		}
	}
}

// TestSchemasMatchSiteTypes compares each document schema with the site type
// it describes, field for field: the same JSON names, the same JSON types,
// and a field is required exactly when the Go type always writes it.
func TestSchemasMatchSiteTypes(t *testing.T) {
	doc := load(t)
	types := map[string]any{
		"StatusDoc": site.StatusDoc{}, "SummaryDoc": site.SummaryDoc{}, "Summary": site.Summary{},
		"Building": site.Building{}, "Floor": site.Floor{}, "Room": site.Room{}, "WallSegment": site.WallSegment{},
		"AutofillDoc": site.AutofillDoc{}, "Autofill": site.Autofill{}, "Media": site.Media{},
		"PropertyRoom": site.PropertyRoom{}, "PropertyStructure": site.PropertyStructure{},
		"PropertyFloor": site.PropertyFloor{}, "ReadyEvent": site.ReadyEvent{}, "Property": site.Property{},
		"Location": site.Location{}, "BillingInfo": site.BillingInfo{}, "Banner": site.Banner{},
		"Phone": site.Phone{}, "SocialLink": site.SocialLink{}, "URLs": site.URLs{},
		"MediaURLs": site.MediaURLs{}, "FloorImage": site.FloorImage{},
	}
	// Fields the Go type may leave out but the served document always has:
	// the sidecar adds authtoken to every event it serves or sends.
	alwaysServed := map[string]bool{"ReadyEvent.authtoken": true}
	names := map[reflect.Type]string{}
	for name, v := range types {
		names[reflect.TypeOf(v)] = name
	}
	for name, v := range types {
		t.Run(name, func(t *testing.T) {
			ref := doc.Components.Schemas[name]
			if ref == nil {
				t.Fatalf("no schema %s", name)
			}
			s := ref.Value
			if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				t.Errorf("schema %s must set additionalProperties false", name)
			}
			fields := jsonFields(reflect.TypeOf(v))
			var goNames, docNames []string
			for _, f := range fields {
				goNames = append(goNames, f.name)
			}
			for p := range s.Properties {
				docNames = append(docNames, p)
			}
			sort.Strings(goNames)
			sort.Strings(docNames)
			if !slices.Equal(goNames, docNames) {
				t.Fatalf("properties differ:\n  site: %q\n  doc:  %q", goNames, docNames)
			}
			for _, f := range fields {
				required := slices.Contains(s.Required, f.name)
				if want := !f.omitEmpty || alwaysServed[name+"."+f.name]; required != want {
					t.Errorf("%s: required = %v, want %v", f.name, required, want)
				}
				checkType(t, f.name, f.typ, s.Properties[f.name], names)
			}
		})
	}
}

type field struct {
	name      string
	typ       reflect.Type
	omitEmpty bool
}

// jsonFields lists the JSON members of struct type t as encoding/json
// writes them, flattening embedded structs.
func jsonFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name: name, typ: f.Type, omitEmpty: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")})
	}
	return out
}

// checkType reports a JSON type of the schema s that does not fit Go type t.
func checkType(t *testing.T, name string, typ reflect.Type, s *openapi3.SchemaRef, names map[reflect.Type]string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() == reflect.Struct {
		want := "#/components/schemas/" + names[typ]
		if names[typ] == "" || s.Ref != want {
			t.Errorf("%s: $ref %q, want %q", name, s.Ref, want)
		}
		return
	}
	if s.Ref != "" {
		if strings.HasSuffix(s.Ref, "/ViewStatus") && typ.Kind() == reflect.String {
			return
		}
		t.Errorf("%s: unexpected $ref %s for Go type %s", name, s.Ref, typ)
		return
	}
	var want string
	switch typ.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int64:
		want = "integer"
	case reflect.Float64:
		want = "number"
	case reflect.Slice:
		want = "array"
	case reflect.Map:
		want = "object"
	default:
		t.Fatalf("%s: no JSON type for Go kind %s", name, typ.Kind())
	}
	if !s.Value.Type.Is(want) {
		t.Errorf("%s: type %v, want %s", name, s.Value.Type, want)
		return
	}
	switch typ.Kind() {
	case reflect.Slice:
		checkType(t, name+"[]", typ.Elem(), s.Value.Items, names)
	case reflect.Map:
		checkType(t, name+"{}", typ.Elem(), s.Value.AdditionalProperties.Schema, names)
	}
}

// TestExamplesValidate checks documents built from the site types against
// their schemas, including the rules a schema adds (enums, dims of 0 or 2).
func TestExamplesValidate(t *testing.T) {
	doc := load(t)
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name, schema string
		value        any
		ok           bool
	}{
		{"ready status", "StatusDoc", site.StatusDoc{Status: site.StatusReady}, true},
		{"unknown status", "StatusDoc", site.StatusDoc{Status: "gone"}, false},
		{"not-ready summary", "SummaryDoc", site.SummaryDoc{Status: site.StatusNotReady}, true},
		{"room without dims", "Room", site.Room{Type: "Bedroom", Dims: []float64{}}, true},
		{"room with dims", "Room", site.Room{Type: "Bedroom", Dims: []float64{1, 2}, Area: 2}, true},
		{"room with one dim", "Room", site.Room{Type: "Bedroom", Dims: []float64{1}}, false},
		{"room with three dims", "Room", site.Room{Type: "Bedroom", Dims: []float64{1, 2, 3}}, false},
		{"room with null dims", "Room", site.Room{Type: "Bedroom"}, false},
		{"measure with units", "PropertyFloor", site.PropertyFloor{InteriorArea: f(1), InteriorAreaUnits: site.SquareFeet, InteriorAreaSource: "Service", Rooms: []site.PropertyRoom{}}, true},
		{"measure with bad units", "PropertyFloor", site.PropertyFloor{InteriorArea: f(1), InteriorAreaUnits: "Acres", InteriorAreaSource: "Service", Rooms: []site.PropertyRoom{}}, false},
		{"autofill context", "AutofillDoc", site.AutofillDoc{Context: site.ResoContext, Value: []site.Autofill{{Media: []site.Media{}, Rooms: []site.PropertyRoom{}, XSvcStructures: []site.PropertyStructure{}}}}, true},
		{"autofill two values", "AutofillDoc", site.AutofillDoc{Context: site.ResoContext, Value: []site.Autofill{{Media: []site.Media{}, Rooms: []site.PropertyRoom{}, XSvcStructures: []site.PropertyStructure{}}, {Media: []site.Media{}, Rooms: []site.PropertyRoom{}, XSvcStructures: []site.PropertyStructure{}}}}, false},
		{"unknown language", "URLs", site.URLs{MediaURLs: map[string]site.MediaURLs{"de": {}}}, false},
		{"known language", "URLs", site.URLs{MediaURLs: map[string]site.MediaURLs{"fr": {PDFMetric: "https://v.example/x/doc/a.pdf"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			err = doc.Components.Schemas[tt.schema].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
			if (err == nil) != tt.ok {
				t.Errorf("%s: valid = %v, want %v (err %v)", b, err == nil, tt.ok, err)
			}
		})
	}
}
