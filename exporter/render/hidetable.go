package render

import (
	"errors"
	"fmt"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// CheckPublic returns an error naming every public file of files (those
// rendered for guide g at now) that the hide table
// (docs/output.md#the-hide-table) does not allow: a path that is no row's,
// a file of a view that does not publish its kind (the view hides it, or
// is not ready) or of an id that is none of g's views nor its alias, media
// under the alias. The renderer asks the table before it lists a file, so
// this is the last check before anything is written: a kind added without
// its row is refused here rather than published by default.
func CheckPublic(g *bundle.Guide, now time.Time, files []File) error {
	views := map[string]*bundle.View{}
	for i := range g.Views {
		views[g.Views[i].ViewID] = &g.Views[i]
	}
	var errs []error
	for _, f := range files {
		if f.Private {
			continue
		}
		row, id, ok := site.PublicFileOf(f.Path)
		if !ok {
			errs = append(errs, fmt.Errorf("public file %s has no row in the hide table (site.PublicFiles)", f.Path))
			continue
		}
		v, alias := views[id], false
		if v == nil && id != "" && id == g.Alias {
			v, alias = g.DefaultView(), true
		}
		if v == nil {
			errs = append(errs, fmt.Errorf("public file %s (%s) belongs to no view of guide %s", f.Path, row.Kind, g.GuideID))
			continue
		}
		ready := ViewStatus(g, v, now) == site.StatusReady
		if !site.Publishes(row.Kind, v.Hidden, ready, alias) {
			errs = append(errs, fmt.Errorf("public file %s (%s) is not published by view %s (hidden %v, status %s, alias %v)",
				f.Path, row.Kind, v.ViewID, v.Hidden, ViewStatus(g, v, now), alias))
		}
	}
	return errors.Join(errs...)
}
