package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"
	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
)

// The photo-heavy guide of these tests: the sample 301-king-st-e with n
// more photos, and its second view, whose photos a test hides.
const (
	photoFolder = "301-king-st-e"
	photoView   = "vKT301B"
)

// newPhotoSite is newExportSite with the guide of photoFolder given n
// more photos (small ones, so that a thousand export in a moment), its
// exporter allowing that many, and its photos shown in photoView alone.
func newPhotoSite(t testing.TB, n int, folders ...string) *exportSite {
	t.Helper()
	s := newSources(t, folders...)
	dir := filepath.Join(s.src, photoFolder)
	s.editGuide(func(g map[string]any) {
		media := g["media"].(map[string]any)
		photos := media["photos"].([]any)
		for i := range n {
			name := fmt.Sprintf("photos/extra-%04d.jpg", i)
			img := image.NewRGBA(image.Rect(0, 0, 8, 8))
			draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{uint8(i), uint8(i >> 8), 128, 255}}, image.Point{}, draw.Src)
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, img, nil); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			photos = append(photos, map[string]any{"id": fmt.Sprintf("ph-x%d", i), "file": name, "width": 8, "height": 8})
		}
		media["photos"] = photos
		// The other view shows none: the photos are uploaded once.
		for _, v := range g["views"].([]any) {
			if v := v.(map[string]any); v["viewId"] != photoView {
				hidden, _ := v["hidden"].([]any)
				v["hidden"] = append(hidden, "photos")
			}
		}
	})
	s.open(func(cfg *exporter.Config) { cfg.Limits.Photos = n + 10 })
	return s
}

// hidePhotos hides the photos in photoView.
func (s *exportSite) hidePhotos() {
	s.editGuide(func(g map[string]any) {
		for _, v := range g["views"].([]any) {
			if v := v.(map[string]any); v["viewId"] == photoView {
				v["hidden"] = append(v["hidden"].([]any), "photos")
			}
		}
	})
}

// editGuide rewrites the guide.json of photoFolder with edit.
func (s *exportSite) editGuide(edit func(map[string]any)) {
	s.t.Helper()
	p := filepath.Join(s.src, photoFolder, "guide.json")
	data, err := os.ReadFile(p)
	if err != nil {
		s.t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		s.t.Fatal(err)
	}
	edit(g)
	if data, err = json.Marshal(g); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// photoKeys returns the keys of b of photoView's photos (each photo and
// its renditions).
func photoKeys(t testing.TB, b *blob.Bucket) []string {
	var out []string
	for _, k := range keys(t, b) {
		if strings.HasPrefix(k, photoView+"/doc/photos/") {
			out = append(out, k)
		}
	}
	return out
}

// startLive runs a Live on cfg as a new process would, running it when
// run is set (else it uploads nothing, as a process about to die); stop
// stops it and releases its outbox.
func startLive(t testing.TB, cfg LiveConfig, run bool) (l *Live, stop func()) {
	t.Helper()
	l, err := NewLive(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if run {
		go func() { l.Run(ctx); close(done) }()
	} else {
		close(done)
	}
	return l, func() { cancel(); <-done; l.Close() }
}

// publishLive publishes every guide of s to b through a Live on cfg,
// stopped once they are in the bucket.
func publishLive(t *testing.T, s *exportSite, cfg LiveConfig) {
	t.Helper()
	l, stop := startLive(t, cfg, true)
	defer stop()
	for _, g := range s.exportAll() {
		if g.Err != nil {
			t.Fatalf("%s: %v", g.Folder, g.Err)
		}
		if err := l.Record(g); err != nil {
			t.Fatal(err)
		}
	}
	idle(t, l, 120*time.Second)
}

// crashedChange runs change (an export or a removal, returning its
// result) as a watcher whose outbox entries cannot be written would, in a
// process that dies before it uploads anything: the intent stays, the
// entry was never written.
func crashedChange(t *testing.T, cfg LiveConfig, change func() *exporter.GuideResult) {
	t.Helper()
	faults := publishtest.NewFaultFs(afero.NewOsFs())
	cfg.OutboxFs = faults
	faults.Fail(1000, publishtest.Entries)
	l, stop := startLive(t, cfg, false)
	done, err := l.Exporting(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	res := change()
	if res.Err != nil {
		t.Fatalf("%s: %v", res.Folder, res.Err)
	}
	if err := l.Record(*res); err == nil {
		t.Fatal("the outbox entry was written: the test tests nothing")
	}
	done()
	stop()
	if left := mustReadIntents(cfg.OutboxDir); len(left) == 0 {
		t.Fatal("no intent left: the restart would not reconcile")
	}
}

// exportBundle exports s's bundle folder, failing the test on an error.
func (s *exportSite) exportBundle(folder string) *exporter.GuideResult {
	s.t.Helper()
	res, err := s.ex.ExportBundle(context.Background(), folder)
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// TestReconcileDeletesRecordedHide: a hide whose deletions exceed the
// limit, cut short by a crash before its outbox entry was written, is
// taken out of the bucket by the restart's reconcile, with no other
// command: the records say the view no longer has those photos, so the
// limit does not hold them back: with MaxDeletes 5 and 20 photos more,
// then at the default limit with 1,010 more (the exporter's limit of
// photos raised), as the case was reported.
func TestReconcileDeletesRecordedHide(t *testing.T) {
	st := startStore(t)
	for _, c := range []struct {
		name       string
		photos     int
		maxDeletes int
	}{{"limit 5", 20, 5}, {"default limit", 1010, DefaultMaxDeletes}} {
		t.Run(c.name, func(t *testing.T) {
			if c.photos > 100 && testing.Short() {
				t.Skip("1,010 photos: not with -short")
			}
			b := newBucket(t, st.Endpoint, fmt.Sprintf("hide-%d", c.photos))
			s := newPhotoSite(t, c.photos, photoFolder)
			logs := &fixtures.SyncBuffer{}
			cfg := s.liveConfig(b, logs)
			cfg.MaxDeletes = c.maxDeletes
			cfg.Withdrawals = RecordsWithdrawals(afero.NewOsFs(), s.priv, 1)
			publishLive(t, s, cfg)
			before := len(photoKeys(t, b))
			crashedChange(t, cfg, func() *exporter.GuideResult {
				s.hidePhotos()
				return s.exportBundle(photoFolder)
			})
			if before <= c.maxDeletes {
				t.Fatalf("%d photo objects: the hide does not exceed the limit of %d", before, c.maxDeletes)
			}

			l, stop := startLive(t, cfg, true)
			defer stop()
			idle(t, l, 120*time.Second)
			if left := photoKeys(t, b); len(left) != 0 {
				t.Fatalf("%d of %d photo objects of %s left in the bucket after the restart (%s…)\n%s", len(left), before, photoView, left[0], logs.String())
			}
			sameAsReconcile(t, s, b)
			statusesComplete(t, b, s.out)
			if left := mustReadIntents(cfg.OutboxDir); len(left) != 0 {
				t.Errorf("intents left: %v", left)
			}
			if !strings.Contains(logs.String(), "withdrawn by the records") {
				t.Errorf("the log does not say what the records withdrew:\n%s", logs.String())
			}
		})
	}
}

// TestReconcileDeletesRecordedRemoval: a guide removed (its bundle
// deleted) in an export cut short by a crash before its outbox entry was
// written leaves the bucket at the restart, beyond the limit of
// deletions: the records marked its ids removed.
func TestReconcileDeletesRecordedRemoval(t *testing.T) {
	st := startStore(t)
	b := newBucket(t, st.Endpoint, "removal")
	s := newPhotoSite(t, 20, photoFolder, "ansi-us-house")
	logs := &fixtures.SyncBuffer{}
	cfg := s.liveConfig(b, logs)
	cfg.MaxDeletes = 5
	cfg.Withdrawals = RecordsWithdrawals(afero.NewOsFs(), s.priv, 1)
	publishLive(t, s, cfg)
	owned := func() []string {
		var out []string
		for _, k := range keys(t, b) {
			for _, id := range []string{"vKT301A", "vKT301B", photoFolder} {
				if site.PublicIDOf(k) == id {
					out = append(out, k)
				}
			}
		}
		return out
	}
	before := len(owned())
	if before <= cfg.MaxDeletes {
		t.Fatalf("%d objects of the guide: its removal does not exceed the limit of %d", before, cfg.MaxDeletes)
	}
	crashedChange(t, cfg, func() *exporter.GuideResult {
		if err := os.RemoveAll(filepath.Join(s.src, photoFolder)); err != nil {
			t.Fatal(err)
		}
		res, err := s.ex.RemoveBundle(context.Background(), photoFolder)
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	l, stop := startLive(t, cfg, true)
	defer stop()
	idle(t, l, 60*time.Second)
	if left := owned(); len(left) != 0 {
		t.Fatalf("%d of %d objects of the removed guide left in the bucket after the restart (%s…)\n%s", len(left), before, left[0], logs.String())
	}
	sameAsReconcile(t, s, b)
	if !slices.Contains(keys(t, b), "vMAPLE-main/data/status") {
		t.Error("the other guide's status went too")
	}
}

// TestWrongTreeDeletesNoMoreThanLimit: an empty or unrelated tree beside
// the right records deletes nothing they list as public beyond the limit:
// Publish refuses and changes nothing, and a reconcile after a crash keeps
// every such object; the records' withdrawals alone go.
func TestWrongTreeDeletesNoMoreThanLimit(t *testing.T) {
	ctx := context.Background()
	st := startStore(t)
	b := newBucket(t, st.Endpoint, "wrong-tree")
	s := newPhotoSite(t, 20, photoFolder, "ansi-us-house")
	cfg := s.liveConfig(b, nil)
	cfg.MaxDeletes = 5
	cfg.Withdrawals = RecordsWithdrawals(afero.NewOsFs(), s.priv, 1)
	publishLive(t, s, cfg)
	var published []string // what a publish may delete: not the lease
	for _, k := range keys(t, b) {
		if !site.IsHidden(k) {
			published = append(published, k)
		}
	}

	// An object the records withdrew: under a view they hold, listed by
	// none (as a hide leaves it).
	withdrawn := photoView + "/doc/photos/withdrawn.jpg"
	if err := b.WriteAll(ctx, withdrawn, []byte("x"), &blob.WriterOptions{Metadata: map[string]string{MetadataHash: strings.Repeat("0", 64)}}); err != nil {
		t.Fatal(err)
	}
	unrelated := t.TempDir()
	if err := os.MkdirAll(filepath.Join(unrelated, "vOTHER/data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unrelated, "vOTHER/data/status"), []byte(`{"status":"ready"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"empty": t.TempDir(), "unrelated": unrelated} {
		t.Run(name, func(t *testing.T) {
			pcfg := cfg.Config
			pcfg.FromDir = dir
			recs, err := OpenRecords(afero.NewOsFs(), s.priv, 1)
			if err != nil {
				t.Fatal(err)
			}
			pcfg.Withdrawn = RecordedWithdrawals(recs...)
			rep, err := Publish(ctx, pcfg)
			if !errors.Is(err, ErrTooManyDeletes) {
				t.Fatalf("publish of the %s tree: %v, %+v; want ErrTooManyDeletes", name, err, rep)
			}
			if rep.Withdrawn != 1 || rep.ToDelete != len(published)+1 {
				t.Errorf("%d to delete, %d of them withdrawn; want %d, 1", rep.ToDelete, rep.Withdrawn, len(published)+1)
			}
			if now := keys(t, b); !slices.Contains(now, withdrawn) || !containsAll(now, published) {
				t.Fatalf("the refused publish changed the bucket: %d objects, had %d", len(now), len(published)+1)
			}

			// The watcher started on the wrong tree after a crash.
			lcfg := cfg
			lcfg.FromDir = dir
			lcfg.OutboxDir = filepath.Join(t.TempDir(), "outbox")
			if err := os.MkdirAll(lcfg.OutboxDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lcfg.OutboxDir, intentPrefix+"1-crashed.json"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			l, stop := startLive(t, lcfg, true)
			defer stop()
			idle(t, l, 60*time.Second)
			now := keys(t, b)
			if !containsAll(now, published) {
				t.Errorf("the reconcile of the %s tree deleted objects the records list as public", name)
			}
			if slices.Contains(now, withdrawn) {
				t.Errorf("the reconcile of the %s tree kept %s, which the records withdrew", name, withdrawn)
			}
			if left := mustReadIntents(lcfg.OutboxDir); len(left) != 1 {
				t.Errorf("intents after a reconcile that kept stale objects: %v, want the one left (the next start tries again)", left)
			}
			if err := b.WriteAll(ctx, withdrawn, []byte("x"), &blob.WriterOptions{Metadata: map[string]string{MetadataHash: strings.Repeat("0", 64)}}); err != nil {
				t.Fatal(err)
			}
			if name == "unrelated" {
				if err := b.Delete(ctx, "vOTHER/data/status"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// containsAll reports whether have holds every key of want.
func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, k := range have {
		set[k] = true
	}
	for _, k := range want {
		if !set[k] {
			return false
		}
	}
	return true
}

// TestReconcileUnreadableRecord: a record that cannot be read withdraws
// nothing and does not stop the reconcile (which every upload waits for):
// its guide's stale objects count against the limit, and stay beyond it.
func TestReconcileUnreadableRecord(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := newExportSite(t, photoFolder)
	s.exportAll()
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket = afero.NewOsFs(), s.out, b
	if _, err := Publish(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s.hidePhotos()
	if res, err := s.ex.ExportBundle(ctx, photoFolder); err != nil || res.Err != nil {
		t.Fatalf("export: %v %v", err, res.Err)
	}
	// The record's head reads, its files' sums do not.
	rec := filepath.Join(s.priv, "exported", "gKT301KINGE1.json")
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(data, []byte("\n"))
	if err := os.WriteFile(rec, append(head, "\nnot json\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &fixtures.SyncBuffer{}
	lcfg := s.liveConfig(b, logs)
	lcfg.MaxDeletes = 0
	lcfg.Withdrawals = RecordsWithdrawals(afero.NewOsFs(), s.priv, 1)
	if err := os.MkdirAll(lcfg.OutboxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lcfg.OutboxDir, intentPrefix+"1-crashed.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, stop := startLive(t, lcfg, true)
	defer stop()
	idle(t, l, 20*time.Second)
	if len(photoKeys(t, b)) == 0 {
		t.Error("the photos went although no record could say they were withdrawn")
	}
	if !strings.Contains(logs.String(), "cannot be read") {
		t.Errorf("the log does not say the record cannot be read:\n%s", logs.String())
	}
}

// TestKeyerRel: the public file of a key, the inverse of keyer.key, for
// pages stored under their index.html key or as the objects of their URLs.
func TestKeyerRel(t *testing.T) {
	for _, pagesAsObjects := range []bool{false, true} {
		k := keyer{prefix: "site/", pagesAsObjects: pagesAsObjects}
		for _, rel := range []string{"vKT301A/index.html", "u/vKT301A/fr/index.html", "embed/alias1/index.html",
			"vKT301A/data/status", "vKT301A/doc/photos/ph-1.jpg", "_assets.v1/view.css"} {
			if got, ok := k.rel(k.key(rel)); !ok || got != rel {
				t.Errorf("pagesAsObjects %v: rel(%q) = %q, %v; want %q", pagesAsObjects, k.key(rel), got, ok, rel)
			}
		}
		if _, ok := k.rel("other/vKT301A/data/status"); ok {
			t.Errorf("pagesAsObjects %v: a key outside the prefix has a public file", pagesAsObjects)
		}
	}
}

// TestForeignNeverWithdrawn: an object guidepub did not write is never
// recorded intent, even under a view the records hold: with
// DeleteForeign it counts against MaxDeletes.
func TestForeignNeverWithdrawn(t *testing.T) {
	ctx := context.Background()
	b, err := OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	owned := &blob.WriterOptions{Metadata: map[string]string{MetadataHash: strings.Repeat("0", 64)}}
	if err := b.WriteAll(ctx, "v1/doc/photos/ph-1.jpg", []byte("x"), owned); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "v1/doc/photos/by-hand.jpg", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.From, cfg.FromDir, cfg.Bucket, cfg.DeleteForeign = afero.NewOsFs(), t.TempDir(), b, true
	cfg.Withdrawn = func(string) (bool, error) { return true, nil }
	cfg.MaxDeletes = 0
	rep, err := Publish(ctx, cfg)
	if !errors.Is(err, ErrTooManyDeletes) || rep.ToDelete != 2 || rep.Withdrawn != 1 {
		t.Fatalf("%v, %+v; want ErrTooManyDeletes with 2 to delete, 1 withdrawn", err, rep)
	}
	cfg.MaxDeletes = 1
	if rep, err := Publish(ctx, cfg); err != nil || rep.Deleted != 2 {
		t.Fatalf("%v, %+v; want both deleted", err, rep)
	}
}
