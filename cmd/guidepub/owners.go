package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guidepub/guidepub/site"
)

// maxOwnersListed bounds the owners a note names.
const maxOwnersListed = 10

// guideOwners reads the owner of every guide published in the private tree
// priv (guides/<guideId>/record.json) and reports whether owner is one of
// them; when not, it returns the owners found, sorted. It stops at the
// first guide of owner. A missing tree has no owners; a record that cannot
// be read is skipped.
func guideOwners(priv, owner string) (found bool, others []string, err error) {
	entries, err := os.ReadDir(filepath.Join(priv, site.GuidesDir))
	if err != nil {
		if os.IsNotExist(err) {
			return false, nil, nil
		}
		return false, nil, err
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || !site.ValidID.MatchString(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(priv, filepath.FromSlash(site.RecordPath(e.Name()))))
		if err != nil {
			continue
		}
		var rec struct {
			OwnerID string `json:"ownerId"`
		}
		if json.Unmarshal(data, &rec) != nil || rec.OwnerID == "" {
			continue
		}
		if rec.OwnerID == owner {
			return true, nil, nil
		}
		seen[rec.OwnerID] = true
	}
	return false, slices.Sorted(maps.Keys(seen)), nil
}

// noteOwnerWithoutGuides writes to w a note when the private tree priv has
// no guide of owner, naming the owners that have guides there (a typo
// shows), and what still holds (what). Nothing is checked when priv is "":
// the store alone does not know which owners have guides.
func noteOwnerWithoutGuides(w io.Writer, priv, owner, what string) {
	if priv == "" {
		return
	}
	found, others, err := guideOwners(priv, owner)
	if err != nil || found {
		return
	}
	there := "no guide is published there yet"
	if len(others) > 0 {
		if len(others) > maxOwnersListed {
			others = append(others[:maxOwnersListed], "…")
		}
		there = "owners of guides there: " + strings.Join(others, ", ")
	}
	fmt.Fprintf(w, "note: owner %s has no guide in %s (%s); %s\n", owner, priv, there, what)
}
