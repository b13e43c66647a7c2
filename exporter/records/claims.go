package records

import (
	"fmt"
	"slices"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/render"
)

// Claims are the ids reserved by exports in flight: a bundle claims its
// guide id and its public ids (view ids and alias) before it publishes,
// so that two bundles never publish the same id. It is not safe for
// concurrent use.
type Claims struct {
	guides map[string]string // guide id -> folder of the bundle claiming it
	public map[string]string // view id or alias -> guide id claiming it
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

// Claim checks that the guide id, view ids and alias of g (in folder)
// belong to no other guide published in m or claimed, and reserves them.
// It returns the problems that reject g, and reserves nothing then.
//
// The ids of a published guide stay its own until the guide is
// unpublished (the exporter's RemoveBundle, or its ExportAll finding the
// folder gone): a folder that vanished may be moving (see
// docs/watching.md), so its guide keeps its ids and another guide
// claiming them is rejected. Only the
// folder that published a guide may give its ids to the guide it holds now
// (the exporter unpublishes the old guide right after).
func (c *Claims) Claim(folder string, g *bundle.Guide, m *Records, alive Alive) []bundle.Problem {
	file := folder + "/" + bundle.FileName
	var problems []bundle.Problem
	add := func(path, format string, args ...any) {
		problems = append(problems, bundle.Problem{File: file, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if mg, ok := m.Summary(g.GuideID); ok && mg.Folder != folder && alive(mg.Folder, g.GuideID) {
		add("$.guideId", "guide id %q is already published by bundle %q", g.GuideID, mg.Folder)
	} else if owner, ok := c.guides[g.GuideID]; ok && owner != folder {
		add("$.guideId", "guide id %q is already claimed by bundle %q", g.GuideID, owner)
	}
	for i, v := range g.Views {
		if gid, holder := c.holder(v.ViewID, folder, g.GuideID, m); gid != "" {
			add(fmt.Sprintf("$.views[%d].viewId", i), "view id %q is already published by guide %q (bundle %q)", v.ViewID, gid, holder)
		}
	}
	if g.Alias != "" {
		if gid, holder := c.holder(g.Alias, folder, g.GuideID, m); gid != "" {
			add("$.alias", "alias %q is already published by guide %q (bundle %q)", g.Alias, gid, holder)
		}
	}
	if len(problems) > 0 {
		return problems
	}
	c.guides[g.GuideID] = folder
	for _, id := range render.PublicIDs(g) {
		c.public[id] = g.GuideID
	}
	return nil
}

// holder returns the guide id and folder holding the public id, or "" when
// id is free for guide guideID of folder: a claim in flight by another
// guide, or another guide published in m from another folder, whether or
// not that folder is still there. One index look-up each.
func (c *Claims) holder(id, folder, guideID string, m *Records) (string, string) {
	if gid, ok := c.public[id]; ok && gid != guideID {
		return gid, c.guides[gid]
	}
	if gid, mg, ok := m.owner(id); ok && gid != guideID && mg.Folder != folder {
		return gid, mg.Folder
	}
	return "", ""
}

// Release drops the claims of guide g.
func (c *Claims) Release(g *bundle.Guide) {
	delete(c.guides, g.GuideID)
	for _, id := range render.PublicIDs(g) {
		if c.public[id] == g.GuideID {
			delete(c.public, id)
		}
	}
}

// IDsOnly returns a copy of g with only what claims need: the guide id,
// the alias and the view ids.
func IDsOnly(g *bundle.Guide) *bundle.Guide {
	out := &bundle.Guide{GuideID: g.GuideID, Alias: g.Alias, Views: make([]bundle.View, len(g.Views))}
	for i, v := range g.Views {
		out.Views[i] = bundle.View{ViewID: v.ViewID}
	}
	return out
}

// SameIDs reports whether a and b claim the same ids.
func SameIDs(a, b *bundle.Guide) bool {
	return a.GuideID == b.GuideID && slices.Equal(render.PublicIDs(a), render.PublicIDs(b))
}
