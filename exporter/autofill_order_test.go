package exporter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// TestAutofillMainRoomsFirst makes the second building the main one and
// checks that autofill lists its rooms first, each building's in bundle
// order.
func TestAutofillMainRoomsFirst(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	var wantKeys []string
	ev.editGuide(kingFolder, func(g map[string]any) {
		bs := g["summary"].(map[string]any)["buildings"].([]any)
		bs[0].(map[string]any)["isMainBuilding"] = false
		bs[1].(map[string]any)["isMainBuilding"] = true
		for _, bi := range []int{1, 0} {
			for _, f := range bs[bi].(map[string]any)["floors"].([]any) {
				for _, r := range f.(map[string]any)["rooms"].([]any) {
					wantKeys = append(wantKeys, jsonNumber(r.(map[string]any)["id"]))
				}
			}
		}
	})
	if _, err := ev.exporter().ExportBundle(context.Background(), kingFolder); err != nil {
		t.Fatal(err)
	}
	data, err := afero.ReadFile(ev.out, filepath.Join(ev.outDir, kingDefault, filepath.FromSlash(site.AutofillFile)))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Value []struct {
			Rooms []site.PropertyRoom
		} `json:"value"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Value) != 1 {
		t.Fatalf("autofill document: %v, %d values", err, len(doc.Value))
	}
	var got []string
	for _, r := range doc.Value[0].Rooms {
		got = append(got, r.RoomKey)
	}
	if len(got) != len(wantKeys) {
		t.Fatalf("rooms %v, want %v", got, wantKeys)
	}
	for i := range got {
		if got[i] != wantKeys[i] {
			t.Fatalf("rooms %v, want %v (main building first)", got, wantKeys)
		}
	}
}

// jsonNumber formats a number decoded from JSON as an integer key.
func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
