package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
	"github.com/spf13/afero"
)

// TestSigningKeyKeptInStore checks that two Events on one store (a sidecar
// and a watch process) sign and verify alike, and that configured keys
// rotate: tokens of the previous key still verify.
func TestSigningKeyKeptInStore(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	cfg := Config{PrivateFS: afero.NewOsFs(), PrivateDir: e.dir, Clock: clocktest.NowFunc(e.clock.Now)}
	other, err := NewEvents(cfg, e.store, e.queue)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := e.events.signer.Issue(guideReady)
	if err := other.VerifyToken(tok, guideReady); err != nil {
		t.Fatalf("second Events on the same store: %v", err)
	}

	oldKey := bytes.Repeat([]byte{7}, 32)
	newKey := bytes.Repeat([]byte{8}, 32)
	cfg.SigningKeys = [][]byte{oldKey}
	before, err := NewEvents(cfg, nil, e.queue) // configured keys need no store
	if err != nil {
		t.Fatal(err)
	}
	oldTok, _ := before.signer.Issue(guideReady)
	if err := other.VerifyToken(oldTok, guideReady); err == nil {
		t.Fatal("a token of a configured key verified with the stored key")
	}
	cfg.SigningKeys = [][]byte{newKey, oldKey}
	after, err := NewEvents(cfg, nil, e.queue)
	if err != nil {
		t.Fatal(err)
	}
	if err := after.VerifyToken(oldTok, guideReady); err != nil {
		t.Fatalf("token of the previous key after rotation: %v", err)
	}
}

func TestConstructorsRefuse(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	good := Config{PrivateFS: afero.NewOsFs(), PrivateDir: e.dir}
	if _, err := NewEvents(Config{}, e.store, e.queue); err == nil {
		t.Error("NewEvents without a file system")
	}
	if _, err := NewEvents(good, nil, e.queue); err == nil {
		t.Error("NewEvents without keys or store")
	}
	short := good
	short.SigningKeys = [][]byte{[]byte("short")}
	if _, err := NewEvents(short, nil, e.queue); err == nil {
		t.Error("NewEvents with a short key")
	}
	if _, err := New(good, nil, e.queue, e.events); err == nil {
		t.Error("New without a store")
	}
	if _, err := New(good, e.store, e.queue, nil); err == nil {
		t.Error("New without events")
	}
	if _, err := New(Config{}, e.store, e.queue, e.events); err == nil {
		t.Error("New without a file system")
	}
}

func TestUnpublishedGuide(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	alice := e.newCred("alice", apitoken.ScopeEvents)
	e.writeGuide("g-gone", "alice", true, e.hooks.URL)
	path := "/api/v1/guides/g-gone/events/ready/"
	if w := e.do("GET", path+"object", &alice, nil); w.Code != 200 {
		t.Fatalf("published: %d %s", w.Code, w.Body)
	}
	if err := os.RemoveAll(filepath.Join(e.dir, filepath.FromSlash(site.GuideDir("g-gone")))); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do("POST", path+"dispatch", &alice, nil), 404, CodeNotFound)
	e.clock.Advance(Recheck)
	wantError(t, e.do("GET", path+"object", &alice, nil), 404, CodeNotFound)

	// Published again, not ready this time.
	e.writeGuide("g-gone", "alice", false)
	wantError(t, e.do("GET", path+"object", &alice, nil), 404, CodeNotFound)
	if _, _, err := e.events.Enqueue(context.Background(), "g-gone"); err != ErrNotReady {
		t.Fatalf("Enqueue: %v, want ErrNotReady", err)
	}
}

// TestEventCacheBounded checks that the guides Events keeps read stay
// within their budget however many guides are looked up (each was kept
// for good before: a sidecar grew by every guide it ever served or
// queued, 23 KB a guide of the samples' size), and that a guide no longer
// kept is read again.
func TestEventCacheBounded(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	const budget = 16 << 10
	e.events.cache = newGuideCache(budget)
	ctx := context.Background()
	id := func(i int) string { return fmt.Sprintf("g-many-%03d", i) }
	for i := range 200 {
		e.writeGuide(id(i), "alice", true)
		if _, err := e.events.Object(ctx, id(i)); err != nil {
			t.Fatalf("Object(%s): %v", id(i), err)
		}
	}
	e.events.cache.CleanUp()
	if n, w := e.events.cache.EstimatedSize(), e.events.cache.WeightedSize(); w > budget || n >= 200 {
		t.Fatalf("%d guides kept, weighing %d bytes: want within %d bytes", n, w, budget)
	}
	ev, err := e.events.Object(ctx, id(0))
	if err != nil || ev.GuideID != id(0) {
		t.Fatalf("Object(%s) once no longer kept: %v, %v", id(0), ev, err)
	}
}
