package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// Visibility returns a digest of the hide table's inputs for guide g at
// now: its view ids and alias, which view is the default, and each
// view's status, hidden features and own floor plans. Two versions of a
// guide with the same Visibility show the same kinds of files and fields
// (their content may differ); a version with another one may show less,
// so that an export of it that stops half-way withdraws the files it did
// not reach rather than leave them as they were
// (docs/robustness.md#the-bucket-after-a-fault).
func Visibility(g *bundle.Guide, now time.Time) string {
	type view struct {
		ID, Status string
		Default    bool
		Hidden     []string
		Plans      map[string]bundle.Documents
	}
	in := struct {
		Alias string
		Views []view
	}{Alias: g.Alias}
	for i := range g.Views {
		v := &g.Views[i]
		in.Views = append(in.Views, view{ID: v.ViewID, Status: ViewStatus(g, v, now), Default: v == g.DefaultView(),
			Hidden: slices.Sorted(slices.Values(v.Hidden)), Plans: v.Plans})
	}
	slices.SortFunc(in.Views, func(a, b view) int { return strings.Compare(a.ID, b.ID) })
	data, err := json.Marshal(in) // maps in key order: deterministic
	if err != nil {
		panic(fmt.Sprintf("render: visibility of guide %s: %v", g.GuideID, err)) // plain data: cannot fail
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
