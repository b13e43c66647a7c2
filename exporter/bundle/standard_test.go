package bundle

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
)

func TestStandardFields(t *testing.T) {
	tests := []struct {
		name, fixture string
		edit          func(b, f map[string]any) // first building and its first floor
		wantPath      string                    // "" when accepted
	}{
		{"rms fixture", "301-king-st-e", func(b, f map[string]any) {}, ""},
		{"ansi fixture", "ansi-us-house", func(b, f map[string]any) {}, ""},
		{"rms building finished", "301-king-st-e", func(b, f map[string]any) { b["finishedAreaTotal"] = 1.0 },
			"$.summary.buildings[0].finishedAreaTotal"},
		{"rms building unfinished below grade", "301-king-st-e", func(b, f map[string]any) { b["unfinishedAreaBelowGrade"] = 0.0 },
			"$.summary.buildings[0].unfinishedAreaBelowGrade"},
		{"rms floor finished", "301-king-st-e", func(b, f map[string]any) { f["finishedArea"] = 1.0 },
			"$.summary.buildings[0].floors[0].finishedArea"},
		{"rms floor unfinished", "301-king-st-e", func(b, f map[string]any) { f["unfinishedArea"] = 1.0 },
			"$.summary.buildings[0].floors[0].unfinishedArea"},
		{"ansi building interior", "ansi-us-house", func(b, f map[string]any) { b["intAreaTotal"] = 1.0 },
			"$.summary.buildings[0].intAreaTotal"},
		{"ansi building excluded", "ansi-us-house", func(b, f map[string]any) { b["excludedAreaAboveGrade"] = 0.0 },
			"$.summary.buildings[0].excludedAreaAboveGrade"},
		{"ansi floor exterior", "ansi-us-house", func(b, f map[string]any) { f["exteriorArea"] = 1.0 },
			"$.summary.buildings[0].floors[0].exteriorArea"},
		{"ansi floor excluded", "ansi-us-house", func(b, f map[string]any) { f["excludedArea"] = 1.0 },
			"$.summary.buildings[0].floors[0].excludedArea"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := fixtures.Bundles.ReadFile("bundles/" + tt.fixture + "/guide.json")
			if err != nil {
				t.Fatal(err)
			}
			var g map[string]any
			if err := json.Unmarshal(data, &g); err != nil {
				t.Fatal(err)
			}
			b := arr(g["summary"], "buildings")[0].(map[string]any)
			tt.edit(b, arr(b, "floors")[0].(map[string]any))
			data, err = json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			_, problems := Parse(data)
			if tt.wantPath == "" {
				if len(problems) > 0 {
					t.Fatalf("problems %v, want none", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Path != tt.wantPath || !strings.Contains(problems[0].Message, "applies only to the") {
				t.Fatalf("problems %v, want one at %s", problems, tt.wantPath)
			}
		})
	}
}
