package site

import (
	"reflect"
	"strings"
)

// Hidden features a view may list: each removes part of what the view
// shows (see docs/documents.md#hidden-features).
const (
	HideMeasurements   = "measurements"
	HideRoomDimensions = "roomDimensions"
	HideAddress        = "address"
	HideFloorPlans     = "floorPlans"
	HidePhotos         = "photos"
	HideVideo          = "video"
	HideAutofill       = "autofill"
)

// Unit systems: of a view's autofill document, and of a floor plan
// document.
const (
	UnitsImperial = "imperial"
	UnitsMetric   = "metric"
)

// DocumentKind is one kind of per-language media document a guide may
// carry: a key of a bundle's media.documents.<lang> object and of the
// Media URL Object (MediaURLs) of the ready event. See
// docs/documents.md#document-kinds.
type DocumentKind struct {
	// Key is the JSON key, in the bundle and in MediaURLs.
	Key string
	// Public documents are copied into the doc folder of every view that
	// does not hide them (their row of the hide table, DocumentFile, says
	// which hidden features remove them); the others are private, copied
	// to the guide's private folder and served by the sidecar with a
	// token. A public document the default view hides is published
	// privately for the ready event.
	Public bool
	// FloorPages kinds hold a list of floor images (one file per floor),
	// the others one file. Their floor pages are published (FileFloorPage)
	// though the kind is private: the ready event links its own copies.
	FloorPages bool
	// Units is UnitsImperial or UnitsMetric for a floor plan that autofill
	// lists as a floor plan media record, "" for other kinds.
	Units string
}

// DocumentKinds lists every document kind, in the order of the fields of
// MediaURLs (and of the bundle's Documents): the order files are checked
// and problems reported in. Adding a kind is adding a row here and a field
// with the same JSON key to MediaURLs and to the bundle's Documents (tests
// check that they agree), the JSON schema of bundles and the OpenAPI
// document (tests check those too); a public kind also needs its row in
// the hide table (PublicFiles), without which it is never published.
var DocumentKinds = []DocumentKind{
	{Key: "galleryFrontImage", Public: true},
	{Key: "pdfMetric", Public: true, Units: UnitsMetric},
	{Key: "pdfImperial", Public: true, Units: UnitsImperial},
	{Key: "embedImage", Public: true},
	{Key: "galleryZip"},
	{Key: "galleryLowResZip"},
	{Key: "sphereZip"},
	{Key: "offlineZip"},
	{Key: "svgZip"},
	{Key: "dxfZip"},
	{Key: "tagImagesZip"},
	{Key: "jpgMetric", FloorPages: true, Units: UnitsMetric},
	{Key: "jpgImperial", FloorPages: true, Units: UnitsImperial},
}

// DocumentKindByKey returns the kind with key, and false when there is none.
func DocumentKindByKey(key string) (DocumentKind, bool) {
	for _, k := range DocumentKinds {
		if k.Key == key {
			return k, true
		}
	}
	return DocumentKind{}, false
}

// KindFields maps each document kind's key to the index of the field of
// the struct type t with that JSON key: t has one field per kind, a string
// or, for FloorPages kinds, a slice. It panics when t does not have
// exactly those fields, a programming error that the tests of every type
// passed here catch.
func KindFields(t reflect.Type) map[string]int {
	fields := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		k, ok := DocumentKindByKey(key)
		if !ok {
			panic("site: field " + t.Name() + "." + f.Name + " is not a document kind")
		}
		want := reflect.String
		if k.FloorPages {
			want = reflect.Slice
		}
		if f.Type.Kind() != want {
			panic("site: field " + t.Name() + "." + f.Name + " has the wrong type for its document kind")
		}
		fields[key] = i
	}
	if len(fields) != len(DocumentKinds) {
		panic("site: " + t.Name() + " lacks a field for a document kind")
	}
	return fields
}

// mediaURLFields indexes the fields of MediaURLs by document kind.
var mediaURLFields = KindFields(reflect.TypeFor[MediaURLs]())

// field returns the field of m holding document kind key. It
// panics for a key that is not a document kind.
func (m *MediaURLs) field(key string) reflect.Value {
	i, ok := mediaURLFields[key]
	if !ok {
		panic("site: no document kind " + key)
	}
	return reflect.ValueOf(m).Elem().Field(i)
}

// URL returns the URL of the single-file document kind key, "" when there
// is none.
func (m *MediaURLs) URL(key string) string { return m.field(key).String() }

// SetURL sets the URL of the single-file document kind key.
func (m *MediaURLs) SetURL(key, url string) { m.field(key).SetString(url) }

// Floors returns the floor images of the FloorPages document kind key.
func (m *MediaURLs) Floors(key string) []FloorImage { return m.field(key).Interface().([]FloorImage) }

// SetFloors sets the floor images of the FloorPages document kind key.
func (m *MediaURLs) SetFloors(key string, floors []FloorImage) {
	m.field(key).Set(reflect.ValueOf(floors))
}
