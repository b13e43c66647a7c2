package bundle

import (
	"reflect"

	"github.com/guidepub/guidepub/site"
)

// documentFields indexes the fields of Documents by document kind; it
// panics at start-up should Documents and site.DocumentKinds disagree.
var documentFields = site.KindFields(reflect.TypeFor[Documents]())

// field returns the field of d holding document kind key. It panics for a
// key that is not a document kind.
func (d *Documents) field(key string) reflect.Value {
	i, ok := documentFields[key]
	if !ok {
		panic("bundle: no document kind " + key)
	}
	return reflect.ValueOf(d).Elem().Field(i)
}

// File returns the bundle file of the single-file document kind key, ""
// when the guide has none.
func (d *Documents) File(key string) string { return d.field(key).String() }

// FloorImages returns the floor images of the FloorPages document kind key.
func (d *Documents) FloorImages(key string) []FloorImage {
	return d.field(key).Interface().([]FloorImage)
}

// Files returns every bundle file d names, kind by kind in the order of
// site.DocumentKinds, floor images in their order; empty names are left
// out.
func (d *Documents) Files() []string {
	var out []string
	d.eachFile(func(_ string, _ int, rel string) { out = append(out, rel) })
	return out
}

// eachFile calls fn for every non-empty file name of d, kind by kind in
// the order of site.DocumentKinds: with the kind's key and, for a floor
// image, its index (-1 for a single-file kind).
func (d *Documents) eachFile(fn func(key string, i int, rel string)) {
	for _, k := range site.DocumentKinds {
		if !k.FloorPages {
			if rel := d.File(k.Key); rel != "" {
				fn(k.Key, -1, rel)
			}
			continue
		}
		for i, f := range d.FloorImages(k.Key) {
			if f.File != "" {
				fn(k.Key, i, f.File)
			}
		}
	}
}
