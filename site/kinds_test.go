package site

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDocumentKindsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range DocumentKinds {
		if k.Key == "" || seen[k.Key] {
			t.Errorf("kind %+v: empty or repeated key", k)
		}
		seen[k.Key] = true
		if k.Units != "" && k.Units != UnitsImperial && k.Units != UnitsMetric {
			t.Errorf("kind %s: unknown units %q", k.Key, k.Units)
		}
		if got, ok := DocumentKindByKey(k.Key); !ok || got != k {
			t.Errorf("DocumentKindByKey(%s) = %+v, %v", k.Key, got, ok)
		}
	}
	if _, ok := DocumentKindByKey("nope"); ok {
		t.Error("DocumentKindByKey finds an unknown key")
	}
}

// TestMediaURLsByKind sets every kind of a MediaURLs through the table and
// checks that the JSON has exactly the table's keys, in its order.
func TestMediaURLsByKind(t *testing.T) {
	var m MediaURLs
	for _, k := range DocumentKinds {
		if k.FloorPages {
			m.SetFloors(k.Key, []FloorImage{{ID: 1, FloorName: "F", URL: "u-" + k.Key}})
			if got := m.Floors(k.Key); len(got) != 1 || got[0].URL != "u-"+k.Key {
				t.Errorf("Floors(%s) = %v", k.Key, got)
			}
		} else {
			m.SetURL(k.Key, "u-"+k.Key)
			if got := m.URL(k.Key); got != "u-"+k.Key {
				t.Errorf("URL(%s) = %q", k.Key, got)
			}
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range DocumentKinds {
		if _, ok := raw[k.Key]; !ok {
			t.Errorf("JSON lacks %s: %s", k.Key, data)
		}
		keys = append(keys, k.Key)
	}
	if len(raw) != len(keys) {
		t.Errorf("JSON has %d keys, want %d: %s", len(raw), len(keys), data)
	}
}

// TestKindFieldsRejects checks that a struct that does not match the table
// is caught.
func TestKindFieldsRejects(t *testing.T) {
	type missing struct {
		A string `json:"galleryFrontImage"`
	}
	type unknown struct {
		A string `json:"notAKind"`
	}
	type wrongType struct {
		A []string `json:"galleryFrontImage"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[missing](), reflect.TypeFor[unknown](), reflect.TypeFor[wrongType]()} {
		t.Run(typ.Name(), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("KindFields(%s) does not panic", typ)
				}
			}()
			KindFields(typ)
		})
	}
}
