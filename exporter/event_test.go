package exporter

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// TestEventKeepsEmptyValues checks that the ready event keeps the optional
// strings and lists the bundle gave as "" or [], and leaves out those it
// did not give.
func TestEventKeepsEmptyValues(t *testing.T) {
	tests := []struct {
		name         string
		edit         func(g map[string]any)
		wantBanner   map[string]any // banner members other than fullName
		wantProperty map[string]any // unit only
	}{
		{"given empty", func(g map[string]any) {
			g["banner"] = map[string]any{"fullName": "Jane", "title": "", "company": "", "phones": []any{}, "emails": []any{},
				"website": "", "socialLinks": []any{}}
			g["property"].(map[string]any)["unit"] = ""
		}, map[string]any{"title": "", "company": "", "phones": []any{}, "emails": []any{}, "website": "", "socialLinks": []any{}},
			map[string]any{"unit": ""}},
		{"not given", func(g map[string]any) {
			g["banner"] = map[string]any{"fullName": "Jane"}
			delete(g["property"].(map[string]any), "unit")
		}, map[string]any{}, map[string]any{}},
		{"given", func(g map[string]any) {
			g["banner"] = map[string]any{"fullName": "Jane", "title": "Agent", "emails": []any{"j@example.com"}}
			g["property"].(map[string]any)["unit"] = "2"
		}, map[string]any{"title": "Agent", "emails": []any{"j@example.com"}}, map[string]any{"unit": "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := newEnv(t, fsKinds[0])
			ev.editGuide(kingFolder, tt.edit)
			if _, err := ev.exporter().ExportBundle(context.Background(), kingFolder); err != nil {
				t.Fatal(err)
			}
			data, err := afero.ReadFile(ev.out, filepath.Join(ev.privDir, filepath.FromSlash(site.EventPath(kingGuide))))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Banner   map[string]any `json:"banner"`
				Property map[string]any `json:"property"`
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			delete(got.Banner, "fullName")
			unit := map[string]any{}
			if u, ok := got.Property["unit"]; ok {
				unit["unit"] = u
			}
			if !reflect.DeepEqual(got.Banner, tt.wantBanner) {
				t.Errorf("banner = %v, want %v", got.Banner, tt.wantBanner)
			}
			if !reflect.DeepEqual(unit, tt.wantProperty) {
				t.Errorf("property unit = %v, want %v", unit, tt.wantProperty)
			}
		})
	}
}
