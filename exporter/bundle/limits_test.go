package bundle

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/fixtures"
)

// kingGuide returns the fixture guide 301-king-st-e as generic JSON.
func kingGuide(t testing.TB) map[string]any {
	t.Helper()
	data, err := fixtures.Bundles.ReadFile("bundles/301-king-st-e/guide.json")
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func obj(v any, key string) map[string]any { return v.(map[string]any)[key].(map[string]any) }
func arr(v any, key string) []any          { return v.(map[string]any)[key].([]any) }

// grow repeats the last element of the list key of parent until it has n.
func grow(parent map[string]any, key string, n int) {
	l := parent[key].([]any)
	for len(l) < n {
		l = append(l, l[len(l)-1])
	}
	parent[key] = l[:n]
}

func firstFloor(g map[string]any) map[string]any {
	return arr(arr(g["summary"], "buildings")[0], "floors")[0].(map[string]any)
}

func TestLimits(t *testing.T) {
	d := DefaultLimits
	tests := []struct {
		name     string
		edit     func(g map[string]any)
		lim      Limits
		wantPath string // "" when accepted
		wantMsg  string
	}{
		{"fixture", func(map[string]any) {}, Limits{}, "", ""},
		{"views", func(g map[string]any) { grow(g, "views", d.Views+1) }, Limits{},
			fmt.Sprintf("$.views[%d]", d.Views), fmt.Sprintf("more than %d views", d.Views)},
		{"views raised", func(g map[string]any) { grow(g, "views", d.Views+1) }, Limits{Views: d.Views + 1}, "", ""},
		{"buildings", func(g map[string]any) { grow(g["summary"].(map[string]any), "buildings", d.Buildings+1) }, Limits{},
			fmt.Sprintf("$.summary.buildings[%d]", d.Buildings), "buildings"},
		{"floors", func(g map[string]any) {
			grow(arr(g["summary"], "buildings")[0].(map[string]any), "floors", d.Floors+1)
		}, Limits{}, fmt.Sprintf("$.summary.buildings[0].floors[%d]", d.Floors), "floors"},
		{"rooms", func(g map[string]any) { grow(firstFloor(g), "rooms", d.Rooms+1) }, Limits{},
			"$.summary.buildings[0].floors[0].rooms[", fmt.Sprintf("more than %d rooms", d.Rooms)},
		{"rooms raised", func(g map[string]any) { grow(firstFloor(g), "rooms", 3000) }, Limits{Rooms: 3100, WallSegments: 1e6}, "", ""},
		{"wall segments", func(g map[string]any) {
			grow(arr(firstFloor(g), "rooms")[0].(map[string]any), "wallSegments", d.WallSegments+1)
		}, Limits{}, "$.summary.buildings[0].floors[0].rooms[0].wallSegments[", "wall segments"},
		{"photos", func(g map[string]any) { grow(obj(g, "media"), "photos", d.Photos+1) }, Limits{},
			fmt.Sprintf("$.media.photos[%d]", d.Photos), "photos"},
		{"documents", func(g map[string]any) { grow(obj(obj(obj(g, "media"), "documents"), "en"), "jpgMetric", d.Documents+1) }, Limits{},
			"$.media.documents.en.jpgMetric[", "document files"},
		{"documents counted across languages", func(g map[string]any) {
			grow(obj(obj(obj(g, "media"), "documents"), "en"), "jpgMetric", 150)
			grow(obj(obj(obj(g, "media"), "documents"), "en"), "jpgImperial", 150)
		}, Limits{Documents: 300}, "$.media.documents.", "more than 300 document files"},
		{"view plans counted with the documents", func(g map[string]any) {
			grow(obj(obj(obj(g, "media"), "documents"), "en"), "jpgMetric", 150)
			plans := map[string]any{"jpgMetric": obj(obj(obj(g, "media"), "documents"), "en")["jpgMetric"]}
			arr(g, "views")[1].(map[string]any)["plans"] = map[string]any{"en": plans}
		}, Limits{Documents: 290}, "$.views[1].plans.en.jpgMetric[", "more than 290 document files"},
		{"webhooks", func(g map[string]any) {
			g["webhooks"] = []any{map[string]any{"url": "https://example.test/h", "secret": "s"}}
			grow(g, "webhooks", d.Webhooks+1)
		}, Limits{}, fmt.Sprintf("$.webhooks[%d]", d.Webhooks), "webhooks"},
		{"phones", func(g map[string]any) { grow(obj(g, "banner"), "phones", d.Phones+1) }, Limits{},
			fmt.Sprintf("$.banner.phones[%d]", d.Phones), "--max-phones"},
		{"emails", func(g map[string]any) { grow(obj(g, "banner"), "emails", d.Emails+1) }, Limits{},
			fmt.Sprintf("$.banner.emails[%d]", d.Emails), "--max-emails"},
		{"emails raised", func(g map[string]any) { grow(obj(g, "banner"), "emails", d.Emails+1) }, Limits{Emails: d.Emails + 1}, "", ""},
		{"social links", func(g map[string]any) { grow(obj(g, "banner"), "socialLinks", d.SocialLinks+1) }, Limits{},
			fmt.Sprintf("$.banner.socialLinks[%d]", d.SocialLinks), "--max-social-links"},
		{"addons", func(g map[string]any) { grow(g, "addons", len(Addons)+1) }, Limits{},
			"$.addons", "addons"},
		{"hidden features per view", func(g map[string]any) {
			views := g["views"].([]any)
			for _, v := range views {
				var all []any
				for _, h := range HiddenFeatures {
					all = append(all, h)
				}
				v.(map[string]any)["hidden"] = all
			}
			grow(views[1].(map[string]any), "hidden", len(HiddenFeatures)+1)
		}, Limits{}, "$.views[1].hidden", "hidden features"},
		{"dims", func(g map[string]any) { arr(firstFloor(g), "rooms")[0].(map[string]any)["dims"] = []any{1, 2, 3} }, Limits{},
			"$.summary.buildings[0].floors[0].rooms[0].dims", "dims"},
		{"long unknown list", func(g map[string]any) { g["notes"] = make([]any, MaxEntries+1) }, Limits{},
			"$.notes", fmt.Sprintf("more than %d entries", MaxEntries)},
		{"big unknown object", func(g map[string]any) {
			m := map[string]any{}
			for i := range MaxEntries + 1 {
				m[fmt.Sprint(i)] = i
			}
			obj(g, "property")["extra"] = m
		}, Limits{}, "$.property.extra", fmt.Sprintf("more than %d entries", MaxEntries)},
		{"list of the wrong type", func(g map[string]any) { obj(g, "property")["country"] = make([]any, MaxEntries+1) }, Limits{},
			"$.property.country", "entries"},
		{"unknown list at the limit", func(g map[string]any) { g["notes"] = make([]any, MaxEntries) }, Limits{}, "", ""},
		{"document languages", func(g map[string]any) {
			docs := obj(obj(g, "media"), "documents")
			for _, l := range []string{"de", "fr", "es", "it", "zh", "pt"} {
				docs[l] = map[string]any{}
			}
		}, Limits{}, "$.media.documents", "document languages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := kingGuide(t)
			tt.edit(g)
			data, err := json.Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			problems := CheckLimits(data, tt.lim)
			if tt.wantPath == "" {
				if len(problems) > 0 {
					t.Fatalf("problems %v, want none", problems)
				}
				return
			}
			if len(problems) != 1 || !strings.HasPrefix(problems[0].Path, tt.wantPath) || !strings.Contains(problems[0].Message, tt.wantMsg) {
				t.Fatalf("problems %v, want one at %s saying %q", problems, tt.wantPath, tt.wantMsg)
			}
		})
	}
}

// hugeGuide writes into a bundle folder of a memory file system a guide
// with rooms rooms, and returns the file system and the folder.
func hugeGuide(t testing.TB, rooms int) (afero.Fs, string) {
	g := kingGuide(t)
	firstFloor(g)["rooms"] = "ROOMS"
	head, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	list.WriteString("[")
	for i := range rooms {
		if i > 0 {
			list.WriteString(",")
		}
		fmt.Fprintf(&list, `{"id":%d}`, 1000+i)
	}
	list.WriteString("]")
	data := strings.Replace(string(head), `"ROOMS"`, list.String(), 1)
	fsys := afero.NewMemMapFs()
	dir := "/src/301-king-st-e"
	if err := afero.WriteFile(fsys, filepath.Join(dir, FileName), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return fsys, dir
}

// TestHugeGuideRejected loads a guide of a million rooms (under the size
// cap of guide.json): it is rejected, naming the limit.
func TestHugeGuideRejected(t *testing.T) {
	fsys, dir := hugeGuide(t, 1_000_000)
	_, err := Load(fsys, dir)
	if err == nil || !strings.Contains(err.Error(), "301-king-st-e/guide.json: $.summary.buildings[0].floors[0].rooms[") ||
		!strings.Contains(err.Error(), "--max-rooms") {
		t.Fatalf("Load: %v, want the rooms limit exceeded", err)
	}
}

// BenchmarkRejectHugeGuide measures how fast a guide of a million rooms
// is rejected.
func BenchmarkRejectHugeGuide(b *testing.B) {
	fsys, dir := hugeGuide(b, 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Load(fsys, dir); err == nil {
			b.Fatal("accepted")
		}
	}
}

// deepGuide returns the fixture guide with, in an unknown field, arrays
// nested levels deep: 400 KB of text at 200,000 levels.
func deepGuide(t testing.TB, levels int) []byte {
	t.Helper()
	g := kingGuide(t)
	g["notes"] = "DEEP"
	head, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", levels) + strings.Repeat("]", levels)
	return []byte(strings.Replace(string(head), `"DEEP"`, deep, 1))
}

// TestDeepNestingRejected checks that arrays nested far deeper than any
// guide are rejected by the limit check, naming the nesting limit, at the
// place the limit is passed. The check is linear (see
// BenchmarkRejectDeepGuide); it used to take minutes for this file.
func TestDeepNestingRejected(t *testing.T) {
	problems := CheckLimits(deepGuide(t, 200_000), Limits{})
	want := "$.notes" + strings.Repeat("[0]", MaxDepth-1)
	if len(problems) != 1 || problems[0].Path != want || !strings.Contains(problems[0].Message, fmt.Sprintf("nested more than %d levels deep", MaxDepth)) {
		t.Fatalf("problems %v, want one at %s about the nesting limit", problems, want)
	}
}

// BenchmarkRejectDeepGuide measures how fast guide.json files of arrays
// nested 20,000 and 200,000 levels deep are rejected.
func BenchmarkRejectDeepGuide(b *testing.B) {
	for _, levels := range []int{20_000, 200_000} {
		b.Run(fmt.Sprintf("levels=%d", levels), func(b *testing.B) {
			data := deepGuide(b, levels)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if len(CheckLimits(data, Limits{})) == 0 {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// TestMediaLimits: the decode limits reach media.Check in its units (the
// flags' millions of pixel passes and MiB), zero fields as the defaults.
func TestMediaLimits(t *testing.T) {
	got := Limits{ImageWork: 7, DecodeMemory: 3}.Media()
	if want := (media.Limits{Pixels: media.DefaultMaxPixels, Work: 7_000_000, Memory: 3 << 20}); got != want {
		t.Errorf("Media() = %+v, want %+v", got, want)
	}
	if got := (Limits{}).Media(); got != (media.Limits{}).WithDefaults() {
		t.Errorf("zero Limits: %+v, want media's defaults %+v", got, media.Limits{}.WithDefaults())
	}
}
