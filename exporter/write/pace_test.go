package write

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/bundle/bundletest"
	"github.com/guidepub/guidepub/exporter/ledger"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/site"
)

// paceEnv is a Writer on real folders with the plan of a sample guide.
type paceEnv struct {
	w    *Writer
	b    *bundle.Bundle
	p    *render.Plan
	root string
}

func newPaceEnv(t *testing.T, giveWay func() bool) *paceEnv {
	t.Helper()
	b := bundletest.Load(t, "301-king-st-e")
	urls := render.URLs{View: "https://view.example", Unbranded: "https://mls.example", Embed: "https://embed.example", Base: "https://example.com"}
	p, err := render.Guide(b, render.Settings{URLs: urls, SourceName: "guidepub"}, time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	osfs := afero.NewOsFs()
	w := New(Config{
		Public:    Tree{FS: osfs, Root: filepath.Join(root, "out"), Perm: 0o644},
		Private:   Tree{FS: osfs, Root: filepath.Join(root, "private"), Perm: 0o600},
		Encodings: site.Encodings, Jobs: 2, Marker: ".writing", GiveWay: giveWay,
	})
	for _, dir := range []string{"out", "private"} {
		if err := osfs.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &paceEnv{w: w, b: b, p: p, root: root}
}

// guide writes the plan at pace over old, as the exporter does.
func (e *paceEnv) guide(ctx context.Context, old *site.ManifestGuide, pace Pace) (Written, error) {
	if err := e.w.Begin(); err != nil {
		return Written{}, err
	}
	out, err := e.w.Guide(ctx, e.b, e.p, old, ledger.Guide{}, pace)
	e.w.End(err == nil)
	return out, err
}

// TestFinishingGivesWay: the export that finishes a quick one stops with
// ErrGaveWay, naming no file, when Config.GiveWay says so before it
// starts; stops where it is when told so after its first file, having
// listed every file it named in its changes; finishes, leaving no quick
// sibling, when it is not told to stop. A Quick export does not stop.
func TestFinishingGivesWay(t *testing.T) {
	var yield atomic.Bool
	e := newPaceEnv(t, yield.Load)
	ctx := context.Background()
	yield.Store(true)
	first, err := e.guide(ctx, nil, Quick)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Quick) == 0 {
		t.Fatal("the first export wrote no quick sibling")
	}
	old := &site.ManifestGuide{Revision: first.Revision, Files: first.Public, Private: first.Private, Quick: first.Quick}

	var named []string
	var mu sync.Mutex
	SyncHook = func(step, name string) {
		if strings.HasPrefix(name, filepath.Join(e.root, "out")+string(filepath.Separator)) && (step == "link" || step == "rename") {
			mu.Lock()
			named = append(named, name)
			mu.Unlock()
			yield.Store(true) // an upload starts once the first file is in place
		}
	}
	t.Cleanup(func() { SyncHook = nil })

	if out, err := e.guide(ctx, old, Finishing); !errors.Is(err, ErrGaveWay) || len(named) > 0 || out.Written > 0 {
		t.Fatalf("told to give way at the start: %v, named %v, wrote %d; want ErrGaveWay and nothing written", err, named, out.Written)
	}
	yield.Store(false)
	out, err := e.guide(ctx, old, Finishing)
	if !errors.Is(err, ErrGaveWay) || len(named) == 0 {
		t.Fatalf("told to give way after its first file: %v, named %v; want ErrGaveWay after some files", err, named)
	}
	listed := map[string]bool{}
	for _, c := range out.Changes {
		listed[filepath.Join(e.root, "out", filepath.FromSlash(c.Path))] = true
	}
	for _, n := range named {
		if !listed[n] {
			t.Errorf("%s named but not listed in the changes of the export that gave way", n)
		}
	}
	SyncHook = nil
	yield.Store(false)
	if out, err := e.guide(ctx, old, Finishing); err != nil || out.Written == 0 || len(out.Quick) > 0 {
		t.Errorf("not told to give way: wrote %d, quick siblings %v, %v; want the final siblings written", out.Written, out.Quick, err)
	}
	yield.Store(true)
	if _, err := e.guide(ctx, nil, Quick); err != nil {
		t.Errorf("a Quick export told to give way: %v; want it done", err)
	}
}
