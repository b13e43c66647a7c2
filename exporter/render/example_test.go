package render_test

import (
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/fixtures"
)

// ExampleGuide renders the plan of a sample bundle: what it would
// publish, decided without writing or reading anything but the bundle
// loaded before.
func ExampleGuide() {
	fsys := afero.NewMemMapFs()
	_ = fs.WalkDir(fixtures.Bundles, "bundles/301-king-st-e", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fixtures.Bundles, p)
		if err != nil {
			return err
		}
		return afero.WriteFile(fsys, "/src/"+strings.TrimPrefix(p, "bundles/"), data, 0o644)
	})
	b, err := bundle.Load(fsys, "/src/301-king-st-e")
	if err != nil {
		fmt.Println(err)
		return
	}
	s := render.Settings{URLs: render.URLs{View: "https://view.example", Unbranded: "https://view.example/u",
		Embed: "https://view.example/embed", Base: "https://portal.example"}, SourceName: "Service"}
	p, err := render.Guide(b, s, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	docs, media := 0, 0
	for _, f := range p.Files {
		if f.Data != nil {
			docs++
		} else {
			media++
		}
	}
	fmt.Println("ids:", p.IDs, "ready:", p.Ready)
	fmt.Println("files with their bytes:", docs, "made from the bundle's media:", media)
	fmt.Println("last:", p.Files[len(p.Files)-1].Path)
	// Output:
	// ids: [vKT301A vKT301B 301-king-st-e] ready: true
	// files with their bytes: 28 made from the bundle's media: 69
	// last: guides/gKT301KINGE1/event.json
}
