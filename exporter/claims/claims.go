// Package claims reserves the ids of the bundles an exporter publishes:
// the export's second stage, after loading (package bundle) and before
// rendering (package render). A bundle claims its guide id, view ids and
// alias, checked against what is published (Published: package records'
// Records) and the claims in flight, so that two bundles never publish
// the same id.
package claims

import (
	"fmt"
	"slices"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

// Claims are the ids reserved by exports in flight: a bundle claims its
// guide id and its public ids (view ids and alias) before it publishes,
// so that two bundles never publish the same id. It is not safe for
// concurrent use.
type Claims struct {
	guides map[string]string // guide id -> folder of the bundle claiming it
	public map[string]string // view id or alias -> guide id claiming it
}

// Published is what a claim is checked against: the guides published
// before (package records' Records is one, read from the private tree).
type Published interface {
	// PublishedGuide returns the record of the published guide id, and
	// false when none is published.
	PublishedGuide(id string) (site.ManifestGuide, bool, error)
	// PublicIDOwner returns the guide publishing the public id (a view
	// id or alias) and its record, and false when none does.
	PublicIDOwner(id string) (string, site.ManifestGuide, bool, error)
}

// NewClaims returns an empty set of claims.
func NewClaims() *Claims {
	return &Claims{guides: map[string]string{}, public: map[string]string{}}
}

// Alive reports whether folder still holds the bundle of guide id. It
// decides one thing only: whether a bundle elsewhere with the same guide id
// is a move of that guide (its old folder no longer holds it) or a
// duplicate (it still does).
type Alive func(folder, guideID string) bool

// IDs are what a bundle claims: its guide id and its public ids, and
// nothing else of it, so that a run over many bundles keeps little of
// each between loading them and publishing them.
type IDs struct {
	Guide  string
	Public []string // bundle.Guide.PublicIDs: the view ids in order, then the alias unless it is one
	Views  int      // how many of Public are view ids
}

// IDsOf returns the ids guide g claims.
func IDsOf(g *bundle.Guide) IDs {
	return IDs{Guide: g.GuideID, Public: g.PublicIDs(), Views: len(g.Views)}
}

// Same reports whether a and b claim the same ids.
func (a IDs) Same(b IDs) bool {
	return a.Guide == b.Guide && slices.Equal(a.Public, b.Public)
}

// Claim checks that the guide id, view ids and alias of g (in folder)
// belong to no other guide published in m or claimed, and reserves them.
// It returns the problems that reject g, and reserves nothing then, or
// the error of records that could not be read (see records.Records.Wait).
//
// The ids of a published guide stay its own until the guide is
// unpublished (the exporter's RemoveBundle, or its ExportAll finding the
// folder gone): a folder that vanished may be moving (see
// docs/watching.md), so its guide keeps its ids and another guide
// claiming them is rejected. Only the
// folder that published a guide may give its ids to the guide it holds now
// (the exporter unpublishes the old guide right after).
func (c *Claims) Claim(folder string, g IDs, m Published, alive Alive) ([]bundle.Problem, error) {
	file := folder + "/" + bundle.FileName
	var problems []bundle.Problem
	add := func(path, format string, args ...any) {
		problems = append(problems, bundle.Problem{File: file, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	mg, ok, err := m.PublishedGuide(g.Guide)
	if err != nil {
		return nil, err
	}
	if ok && mg.Folder != folder && alive(mg.Folder, g.Guide) {
		add("$.guideId", "guide id %q is already published by bundle %q", g.Guide, mg.Folder)
	} else if owner, ok := c.guides[g.Guide]; ok && owner != folder {
		add("$.guideId", "guide id %q is already claimed by bundle %q", g.Guide, owner)
	}
	for i, id := range g.Public {
		gid, holder, err := c.holder(id, folder, g.Guide, m)
		if err != nil {
			return nil, err
		}
		switch {
		case gid == "":
		case i < g.Views:
			add(fmt.Sprintf("$.views[%d].viewId", i), "view id %q is already published by guide %q (bundle %q)", id, gid, holder)
		default:
			add("$.alias", "alias %q is already published by guide %q (bundle %q)", id, gid, holder)
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	c.guides[g.Guide] = folder
	for _, id := range g.Public {
		c.public[id] = g.Guide
	}
	return nil, nil
}

// holder returns the guide id and folder holding the public id, or "" when
// id is free for guide guideID of folder: a claim in flight by another
// guide, or another guide published in m from another folder, whether or
// not that folder is still there. One index look-up each (or, before
// every record is read, one or two file reads: records.Records).
func (c *Claims) holder(id, folder, guideID string, m Published) (string, string, error) {
	if gid, ok := c.public[id]; ok && gid != guideID {
		return gid, c.guides[gid], nil
	}
	gid, mg, ok, err := m.PublicIDOwner(id)
	if err != nil {
		return "", "", err
	}
	if ok && gid != guideID && mg.Folder != folder {
		return gid, mg.Folder, nil
	}
	return "", "", nil
}

// Release drops the claims of g. Once none is left, the maps are made
// again: a map keeps the room of its largest size, and a first export
// claims every bundle at once.
func (c *Claims) Release(g IDs) {
	delete(c.guides, g.Guide)
	for _, id := range g.Public {
		if c.public[id] == g.Guide {
			delete(c.public, id)
		}
	}
	if len(c.guides) == 0 && len(c.public) == 0 {
		*c = *NewClaims()
	}
}
