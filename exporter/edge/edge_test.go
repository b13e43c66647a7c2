package edge

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
)

// open opens an edge on dir sending to p, with short retries, and runs it
// until the test ends.
func open(t *testing.T, dir string, p Purger, settled func(string, string) bool, log *bytes.Buffer) *Edge {
	t.Helper()
	cfg := Config{Dir: dir, Purger: p, Settled: settled, RetryMin: 10 * time.Millisecond, RetryMax: 300 * time.Millisecond}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: log}, nil))
	}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; e.Close() })
	return e
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// idle waits for e to have sent everything, failing after 20 s.
func idle(t *testing.T, e *Edge) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if n := e.Idle(ctx); n != 0 {
		t.Fatalf("%d purges still queued", n)
	}
}

// record records, as exports do, that guide g changed ids.
func record(t *testing.T, e *Edge, g string, ids ...string) {
	t.Helper()
	owed, err := e.Owe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owed.Record(Change{GuideID: g, Folder: g, IDs: ids}); err != nil {
		t.Fatal(err)
	}
	if err := owed.Release(); err != nil {
		t.Fatal(err)
	}
}

func env(vals map[string]string) func(string) string { return func(k string) string { return vals[k] } }

// TestPurgesReachEachCDN: thirty guides' changes (two ids each; eight for
// CloudFront, whose limits make it slow) and a purge of everything reach
// each CDN as it documents them, batched within its limit per request,
// every id purged; CloudFront's refusals of too many wildcard paths in
// progress are waited out.
func TestPurgesReachEachCDN(t *testing.T) {
	cloudFrontBusy = 100 * time.Millisecond
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	cf := &cloudFrontAPI{dist: "E2QWRUHAPOMQZL", inProgress: 200 * time.Millisecond}
	for _, c := range []struct {
		name   string
		server func(*testing.T) *cdnServer
		url    func(*cdnServer) string
		limit  int
		guides int
	}{
		{"varnish", func(t *testing.T) *cdnServer { return newCDN(t, varnishPurge) },
			func(s *cdnServer) string { return "varnish+" + s.URL }, 256, 30},
		{"fastly", func(t *testing.T) *cdnServer { return newCDN(t, fastlyAPI("SVC1", "tok")) },
			func(s *cdnServer) string { return "fastly://SVC1?endpoint=" + s.URL }, 256, 30},
		{"cloudflare", func(t *testing.T) *cdnServer { return newCDN(t, cloudflareAPI("zone1", "cftok")) },
			func(s *cdnServer) string { return "cloudflare://zone1?plan=enterprise&endpoint=" + s.URL }, 100, 30},
		{"cloudfront", func(t *testing.T) *cdnServer { return newCloudFrontServer(t, cf) },
			func(s *cdnServer) string { return "cloudfront://e2qwruhapomqzl?endpoint=" + s.URL }, 5, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := c.server(t)
			p, err := Parse(c.url(srv), env(map[string]string{"FASTLY_API_TOKEN": "tok", "CLOUDFLARE_API_TOKEN": "cftok"}))
			if err != nil {
				t.Fatal(err)
			}
			var gate atomic.Bool // everything recorded before the first purge
			e := open(t, t.TempDir(), p, func(string, string) bool { return gate.Load() }, nil)
			var want []string
			for i := range c.guides {
				a, b := fmt.Sprintf("v%02dA", i), fmt.Sprintf("g%02d", i)
				record(t, e, b, a, b)
				want = append(want, a, b)
			}
			if err := e.PurgeAll(); err != nil {
				t.Fatal(err)
			}
			gate.Store(true)
			idle(t, e)
			srv.mu.Lock()
			defer srv.mu.Unlock()
			var got []string
			all := 0
			for _, ids := range srv.purged {
				if slices.Equal(ids, []string{"*"}) {
					all++
					continue
				}
				if len(ids) > c.limit {
					t.Errorf("a request named %d ids, more than %d", len(ids), c.limit)
				}
				got = append(got, ids...)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(slices.Compact(got), want) || all != 1 {
				t.Errorf("purged %d ids of %d, everything %d times; refused %q", len(slices.Compact(got)), len(want), all, srv.refused)
			}
			// Entries are batched whole: a request takes as many guides'
			// two ids as fit.
			perRequest := c.limit / 2
			if max := (c.guides+perRequest-1)/perRequest + 1; len(srv.purged) > max {
				t.Errorf("%d requests, want at most %d (batched)", len(srv.purged), max)
			}
			if names, _ := os.ReadDir(e.cfg.Dir); len(names) != 1 { // the lock file
				t.Errorf("the queue folder holds %d files after the purges", len(names))
			}
			t.Logf("%d requests, refused %d times", len(srv.purged), len(srv.refused))
		})
	}
}

// TestPurgeOutage: a CDN answering 503 and 429 (with Retry-After) gets
// the purge once it answers again; nothing is dropped meanwhile.
func TestPurgeOutage(t *testing.T) {
	srv := newCDN(t, fastlyAPI("SVC1", "tok"))
	srv.fail = []int{503, 503, 502, 429, 503}
	p, _ := Parse("fastly://SVC1?endpoint="+srv.URL, env(map[string]string{"FASTLY_API_TOKEN": "tok"}))
	var log bytes.Buffer
	e := open(t, t.TempDir(), p, nil, &log)
	record(t, e, "g1", "vHIDE", "g1-alias")
	idle(t, e)
	if len(srv.purged) != 1 || !slices.Equal(srv.purged[0], []string{"g1-alias", "vHIDE"}) {
		t.Errorf("purged %q", srv.purged)
	}
	if !strings.Contains(log.String(), "purge not taken; trying again") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestPurgeRefusedKept: a purge the CDN refuses (a wrong token) is logged
// as an error and kept, on disk too; the next process with the right
// token sends it.
func TestPurgeRefusedKept(t *testing.T) {
	srv := newCDN(t, fastlyAPI("SVC1", "right"))
	dir := t.TempDir()
	wrong, _ := Parse("fastly://SVC1?endpoint="+srv.URL, env(map[string]string{"FASTLY_API_TOKEN": "wrong"}))
	var log bytes.Buffer
	cfg := Config{Dir: dir, Purger: wrong, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &log}, nil))}
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	record(t, e, "g1", "vHIDE")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	e.Run(ctx)
	cancel()
	e.Close()
	if len(srv.refused) < 2 || len(srv.purged) != 0 || !strings.Contains(log.String(), "purge refused; trying again") {
		t.Fatalf("refused %d, purged %d; log:\n%s", len(srv.refused), len(srv.purged), log.String())
	}
	right, _ := Parse("fastly://SVC1?endpoint="+srv.URL, env(map[string]string{"FASTLY_API_TOKEN": "right"}))
	idle(t, open(t, dir, right, nil, nil))
	if len(srv.purged) != 1 || !slices.Equal(srv.purged[0], []string{"vHIDE"}) {
		t.Errorf("purged %q", srv.purged)
	}
}

// TestCrashOwesEverything: a process that dies during an export (its owed
// file left) makes the next one purge everything; one that dies with a
// purge saved but not sent makes the next one send it.
func TestCrashOwesEverything(t *testing.T) {
	srv := newCDN(t, varnishPurge)
	p, _ := Parse("varnish+"+srv.URL, nil)
	dir := t.TempDir()
	e, err := Open(context.Background(), Config{Dir: dir, Purger: p})
	if err != nil {
		t.Fatal(err)
	}
	record(t, e, "g1", "vSAVED")
	if _, err := e.Owe(); err != nil { // the export that never finishes
		t.Fatal(err)
	}
	e.Close() // killed: nothing sent
	if len(srv.purged) != 0 {
		t.Fatal("purged before the crash")
	}
	idle(t, open(t, dir, p, nil, nil))
	var got []string
	for _, ids := range srv.purged {
		got = append(got, ids...)
	}
	if !slices.Contains(got, "vSAVED") || !slices.Contains(got, "*") {
		t.Errorf("after the restart purged %q, want vSAVED and everything", srv.purged)
	}
}

// TestPurgeWaitsForUpload: with live publishing, a guide's purge waits
// until its files are in the bucket (else the edge would cache the old
// objects again); other guides' go ahead.
func TestPurgeWaitsForUpload(t *testing.T) {
	srv := newCDN(t, varnishPurge)
	p, _ := Parse("varnish+"+srv.URL, nil)
	var uploaded atomic.Bool
	e := open(t, t.TempDir(), p, func(guide, _ string) bool { return guide != "slow" || uploaded.Load() }, nil)
	record(t, e, "slow", "vSLOW")
	record(t, e, "quick", "vQUICK")
	deadline := time.Now().Add(5 * time.Second)
	for e.Sent() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	srv.mu.Lock()
	before := slices.Clone(srv.purged)
	srv.mu.Unlock()
	if len(before) != 1 || !slices.Equal(before[0], []string{"vQUICK"}) {
		t.Fatalf("before the upload purged %q, want vQUICK alone", before)
	}
	uploaded.Store(true)
	idle(t, e)
	if len(srv.purged) != 2 || !slices.Equal(srv.purged[1], []string{"vSLOW"}) {
		t.Errorf("purged %q", srv.purged)
	}
}

// TestParse: what --purge accepts, and what it says of what it does not.
func TestParse(t *testing.T) {
	for raw, want := range map[string]string{
		"varnish+http://127.0.0.1:6081": "varnish at http://127.0.0.1:6081",
		"fastly://SVC1":                 "fastly service SVC1",
		"cloudflare://zone1?plan=pro":   "cloudflare zone zone1",
		"fastly://SVC1 without token":   "error",
		"cloudflare://zone1?plan=gold":  "error",
		"akamai://x":                    "error",
		"varnish+http://":               "error",
	} {
		vals := map[string]string{"FASTLY_API_TOKEN": "t", "CLOUDFLARE_API_TOKEN": "t"}
		if strings.Contains(raw, "without token") {
			raw, vals = "fastly://SVC1", nil
		}
		p, err := Parse(raw, env(vals))
		got := "error"
		if err == nil {
			got = p.String()
		}
		if got != want {
			t.Errorf("Parse(%q) = %q (%v), want %q", raw, got, err, want)
		}
	}
	_ = http.MethodPost
}

// TestPurgeWaitsForOrigin: with a Delay (an origin that sees a change
// late), a purge is sent no sooner than that after its change.
func TestPurgeWaitsForOrigin(t *testing.T) {
	srv := newCDN(t, varnishPurge)
	p, _ := Parse("varnish+"+srv.URL, nil)
	e, err := Open(context.Background(), Config{Dir: t.TempDir(), Purger: p, Delay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; e.Close() }()
	start := time.Now()
	record(t, e, "g1", "vHIDE")
	idle(t, e)
	if took := time.Since(start); took < 300*time.Millisecond || len(srv.purged) != 1 {
		t.Errorf("purged %q after %v, want one purge no sooner than 300ms", srv.purged, took)
	}
}

// TestUnsavedPurgeSent: a purge whose entry cannot be written (a full
// disk) is sent from memory all the same, and the export's record stays,
// so that a crash before it is sent purges everything.
func TestUnsavedPurgeSent(t *testing.T) {
	srv := newCDN(t, varnishPurge)
	p, _ := Parse("varnish+"+srv.URL, nil)
	faults := publishtest.NewFaultFs(afero.NewOsFs())
	dir := t.TempDir()
	e, err := Open(context.Background(), Config{Dir: dir, Fs: faults, Purger: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; e.Close() }()
	owed, err := e.Owe()
	if err != nil {
		t.Fatal(err)
	}
	faults.Fail(100, func(op, name string) bool { return strings.Contains(filepath.Base(name), entryPrefix) })
	if err := owed.Record(Change{GuideID: "g1", IDs: []string{"vHIDE"}}); err == nil {
		t.Fatal("Record saved its purge on a failing disk")
	}
	faults.Fail(0, nil)
	if err := owed.Release(); err != nil {
		t.Fatal(err)
	}
	idle(t, e)
	if len(srv.purged) != 1 || !slices.Equal(srv.purged[0], []string{"vHIDE"}) {
		t.Errorf("purged %q, want vHIDE from memory", srv.purged)
	}
	names, _ := os.ReadDir(dir)
	owedLeft := 0
	for _, n := range names {
		if strings.HasPrefix(n.Name(), owedPrefix) {
			owedLeft++
		}
	}
	if owedLeft != 1 {
		t.Errorf("%d export records left, want the one whose purge was not saved", owedLeft)
	}
}
