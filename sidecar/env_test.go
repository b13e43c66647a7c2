package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/sidecar/delivery"
	"github.com/guidepub/guidepub/sidecar/store"
	"github.com/guidepub/guidepub/sidecar/store/storetest"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/clock/clocktest"
	"github.com/spf13/afero"
)

// backends are the stores the API tests run against.
var backends = []struct {
	name string
	dsn  func(testing.TB) string
}{
	{"sqlite", storetest.SQLite},
	{"postgres", storetest.Postgres},
}

// forEachBackend runs fn once per store backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, dsn string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { fn(t, b.dsn(t)) })
	}
}

// testClock is a settable clock for tests.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// receiver is a webhook endpoint that records what it gets.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	bodies [][]byte
	got    chan struct{}
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{status: http.StatusNoContent, got: make(chan struct{}, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, b)
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status)
		rc.got <- struct{}{}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) setStatus(code int) {
	rc.mu.Lock()
	rc.status = code
	rc.mu.Unlock()
}

// env is a sidecar on a real private tree, store and queue.
type env struct {
	t      testing.TB
	dir    string
	clock  *testClock
	store  *store.Store
	queue  *delivery.Queue
	events *Events
	srv    *Server
	hooks  *receiver
}

// cred is an app's credentials.
type cred struct{ appID, token string }

// Fixture guides: ready and owned by alice, not ready (alice), ready (bob).
const (
	guideReady    = "g-ready"
	guideNotReady = "g-draft"
	guideOther    = "g-bob"
	workOrder     = "WO-1"
)

func newEnv(t testing.TB, dsn string, mod func(*Config)) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clock: newClock(), hooks: newReceiver(t)}
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	st, err := store.Open(ctx, dsn, logger)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e.store = st
	q, err := delivery.New(st, delivery.Config{
		RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond, MaxAttempts: 2,
		Timeout: 5 * time.Second, AllowPrivateTargets: true, Workers: 2, Logger: logger,
	})
	if err != nil {
		t.Fatalf("delivery queue: %v", err)
	}
	e.queue = q
	e.writeGuide(guideReady, "alice", true, e.hooks.URL+"/a", e.hooks.URL+"/b")
	e.writeGuide(guideNotReady, "alice", false)
	e.writeGuide(guideOther, "bob", true, e.hooks.URL+"/bob")
	cfg := DefaultConfig()
	cfg.RateLimit = 0 // no limit unless a test sets one
	cfg.PrivateFS, cfg.PrivateDir = afero.NewOsFs(), e.dir
	cfg.Clock, cfg.Logger = clocktest.NowFunc(e.clock.Now), logger
	if mod != nil {
		mod(&cfg)
	}
	e.events, err = NewEvents(cfg, st, q)
	if err != nil {
		t.Fatalf("NewEvents: %v", err)
	}
	e.srv, err = New(cfg, st, q, e.events)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// startQueue starts delivering and stops the queue when the test ends.
func (e *env) startQueue() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.queue.Start(ctx); err != nil {
		e.t.Fatalf("start queue: %v", err)
	}
	e.t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		e.queue.Stop(sctx)
		cancel()
	})
}

func (e *env) write(rel string, data []byte) {
	e.t.Helper()
	p := filepath.Join(e.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) writeJSON(rel string, v any) {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(rel, b)
}

// readyEvent is the event the fixture guide id has in the private tree.
func readyEvent(id string) site.ReadyEvent {
	return site.ReadyEvent{
		Type: site.EventReady, GuideID: id, DefaultViewID: id + "-v1", GuideAlias: id + "-alias",
		WorkOrderID: workOrder,
		URLs: site.URLs{PublicURL: "https://view.example/" + id + "-v1", MediaURLs: map[string]site.MediaURLs{
			"en": {GalleryZip: site.PrivateURL("https://view.example", id, "gallery.zip")},
		}},
		Property:    site.Property{FullAddress: "301 King St E, Toronto <ON> & more", Country: "CA", City: "Toronto"},
		BillingInfo: site.BillingInfo{GuideType: "standard", Addons: []string{"vr"}},
	}
}

func (e *env) writeGuide(id, owner string, ready bool, hooks ...string) {
	e.t.Helper()
	rec := site.GuideRecord{GuideID: id, OwnerID: owner, WorkOrderID: workOrder, DefaultViewID: id + "-v1",
		ViewIDs: []string{id + "-v1"}, Revision: "rev-1", Ready: ready}
	for _, h := range hooks {
		rec.Webhooks = append(rec.Webhooks, site.Webhook{URL: h})
	}
	e.writeJSON(site.RecordPath(id), rec)
	if ready {
		e.writeJSON(site.EventPath(id), readyEvent(id))
	}
}

// newCred creates a token for owner with scopes in the store.
func (e *env) newCred(owner string, scopes ...string) cred {
	e.t.Helper()
	id, tok, err := apitoken.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.CreateToken(context.Background(), store.Token{
		AppID: id, OwnerID: owner, Scopes: scopes, Hash: apitoken.Hash(tok), CreatedAt: e.clock.Now(),
	}); err != nil {
		e.t.Fatal(err)
	}
	return cred{id, tok}
}

// do sends a request to the server in-process and returns the response.
func (e *env) do(method, target string, c *cred, hdr http.Header) *httptest.ResponseRecorder {
	e.t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if c != nil {
		r.Header.Set(HeaderAppID, c.appID)
		r.Header.Set(HeaderAppToken, c.token)
	}
	for k, vs := range hdr {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, r)
	return w
}

// decode parses a JSON response body into v, failing on anything else.
func decode(t testing.TB, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, w.Body)
	}
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
}

// wantError checks an error response's status and code.
func wantError(t testing.TB, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	var b errorBody
	decode(t, w, &b)
	if b.Code != code {
		t.Fatalf("code %q, want %q; body %s", b.Code, code, w.Body)
	}
	// Every 401 carries a challenge (RFC 9110 §15.5.2).
	if ch := w.Header().Get("WWW-Authenticate"); status == http.StatusUnauthorized && !strings.HasPrefix(ch, `Bearer realm="guidepub"`) {
		t.Fatalf("401 with WWW-Authenticate %q, want a Bearer challenge", ch)
	}
}
