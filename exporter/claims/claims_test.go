package claims_test

import (
	"testing"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/claims"
	"github.com/guidepub/guidepub/site"
)

// published is a Published of guides by id, each at a folder.
type published map[string]site.ManifestGuide

func (p published) PublishedGuide(id string) (site.ManifestGuide, bool, error) {
	g, ok := p[id]
	return g, ok, nil
}

func (p published) PublicIDOwner(id string) (string, site.ManifestGuide, bool, error) {
	for gid, g := range p {
		for _, v := range g.Ids {
			if v == id {
				return gid, g, true, nil
			}
		}
	}
	return "", site.ManifestGuide{}, false, nil
}

func guide(id, alias string, views ...string) *bundle.Guide {
	g := &bundle.Guide{GuideID: id, Alias: alias}
	for _, v := range views {
		g.Views = append(g.Views, bundle.View{ViewID: v})
	}
	return g
}

// TestClaim: a bundle's ids are refused while another bundle claims them
// or another guide publishes them, from the path of the id in guide.json,
// and free again once released.
func TestClaim(t *testing.T) {
	pub := published{"gOLD": {Folder: "old", Ids: []string{"vOLD"}}}
	alive := func(string, string) bool { return true }
	c := claims.NewClaims()
	if p, err := c.Claim("a", claims.IDsOf(guide("gA", "a-alias", "vA")), pub, alive); err != nil || p != nil {
		t.Fatalf("first claim: %v %v", p, err)
	}
	for _, tc := range []struct {
		g    *bundle.Guide
		path string
	}{
		{guide("gB", "", "vA"), "$.views[0].viewId"},
		{guide("gB", "a-alias", "vB"), "$.alias"},
		{guide("gA", "", "vC"), "$.guideId"},
		{guide("gB", "", "vOLD"), "$.views[0].viewId"},
	} {
		p, err := c.Claim("b", claims.IDsOf(tc.g), pub, alive)
		if err != nil || len(p) != 1 || p[0].Path != tc.path || p[0].File != "b/"+bundle.FileName {
			t.Errorf("claim of %+v: %v %v, want one problem at %s", claims.IDsOf(tc.g), p, err, tc.path)
		}
	}
	c.Release(claims.IDsOf(guide("gA", "a-alias", "vA")))
	if p, err := c.Claim("b", claims.IDsOf(guide("gB", "a-alias", "vA")), pub, alive); err != nil || p != nil {
		t.Errorf("claim after release: %v %v", p, err)
	}
}
