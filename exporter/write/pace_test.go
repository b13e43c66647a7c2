package write

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/render"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// paceEnv is a Writer on real folders with the plan of a sample guide.
type paceEnv struct {
	w    *Writer
	b    *bundle.Bundle
	p    *render.Plan
	root string
}

func newPaceEnv(t *testing.T, giveWay func(context.Context) error) *paceEnv {
	t.Helper()
	files, err := fixtures.BundleFiles("301-king-st-e")
	if err != nil {
		t.Fatal(err)
	}
	src := afero.NewMemMapFs()
	for name, data := range files {
		if err := afero.WriteFile(src, path.Join("/src/g", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.Load(src, "/src/g")
	if err != nil {
		t.Fatal(err)
	}
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
	out, err := e.w.Guide(ctx, e.b, e.p, old, pace)
	e.w.End(err == nil)
	return out, err
}

// TestFinishingGivesWay: the export that finishes a quick one writes
// nothing while Config.GiveWay holds it, goes on once it returns, and
// leaves no quick sibling; a Quick export does not wait; a Finishing
// export whose context ends while it waits returns its error.
func TestFinishingGivesWay(t *testing.T) {
	var open atomic.Bool // GiveWay returns at once
	released := make(chan struct{})
	e := newPaceEnv(t, func(ctx context.Context) error {
		if open.Load() {
			return nil
		}
		select {
		case <-released:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	ctx := context.Background()
	first, err := e.guide(ctx, nil, Quick) // GiveWay closed: it must not wait
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Quick) == 0 {
		t.Fatal("the first export wrote no quick sibling")
	}
	old := &site.ManifestGuide{Revision: first.Revision, Files: first.Public, Private: first.Private, Quick: first.Quick}

	var named atomic.Int32
	SyncHook = func(step, name string) {
		if strings.HasPrefix(name, e.root) && (step == "link" || step == "rename") {
			named.Add(1)
		}
	}
	t.Cleanup(func() { SyncHook = nil })

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.guide(cancelled, old, Finishing); !errors.Is(err, context.Canceled) {
		t.Errorf("Finishing with its context ended while held: %v, want context.Canceled", err)
	}
	done := make(chan error, 1)
	var out Written
	go func() {
		var err error
		out, err = e.guide(ctx, old, Finishing)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the Finishing export returned (%v) while held", err)
	case <-time.After(300 * time.Millisecond):
	}
	if n := named.Load(); n > 0 {
		t.Errorf("the Finishing export named %d files while held", n)
	}
	open.Store(true)
	close(released)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if named.Load() == 0 || len(out.Quick) > 0 {
		t.Errorf("once released: %d files named, quick siblings %v; want the final siblings written, none quick", named.Load(), out.Quick)
	}
}

// TestFinishingGivesWayForAWhile: a Finishing export held for good goes on
// after MaxGiveWay and finishes its siblings.
func TestFinishingGivesWayForAWhile(t *testing.T) {
	defer func(d time.Duration) { MaxGiveWay = d }(MaxGiveWay)
	MaxGiveWay = 200 * time.Millisecond
	e := newPaceEnv(t, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	ctx := context.Background()
	first, err := e.guide(ctx, nil, Quick)
	if err != nil {
		t.Fatal(err)
	}
	old := &site.ManifestGuide{Revision: first.Revision, Files: first.Public, Private: first.Private, Quick: first.Quick}
	out, err := e.guide(ctx, old, Finishing)
	if err != nil || out.Written == 0 || len(out.Quick) > 0 {
		t.Errorf("held for good: wrote %d, quick siblings %v, %v; want the final siblings written", out.Written, out.Quick, err)
	}
}
