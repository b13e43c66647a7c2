package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/serve/varnishtest"
)

// The edge in the tests is real Varnish (Debian's varnish and
// varnish-modules) running the VCL `guidepub serve --print-config varnish`
// prints, in front of a real `guidepub serve`.

// proc is a process of the test, stopped when the test ends; its output
// is kept, and shown when the test fails.
type proc struct {
	cmd    *exec.Cmd
	out    *fixtures.SyncBuffer
	exited chan struct{}
}

// startProc starts bin with args.
func startProc(t testing.TB, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), out: &fixtures.SyncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s %s:\n%s", filepath.Base(bin), strings.Join(args[:min(1, len(args))], " "), p.out)
		}
	})
	return p
}

// stop interrupts the process, and kills it if it has not stopped 10 s
// later.
func (p *proc) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits until addr accepts connections, failing after 20 s
// or when p exits.
func waitListening(t testing.TB, p *proc, addr string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("exited before listening on %s:\n%s", addr, p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s:\n%s", addr, p.out)
		}
	}
}

// edgeSite is guidepub behind Varnish on a copy of two sample bundles:
// the trees, serve, and the edge's base URL.
type edgeSite struct {
	bin, src, out, priv string
	edge                string // http://HOST:PORT of Varnish
	edgeAddr            string
}

// startEdgeSite exports the samples 301-king-st-e and rue-saint-denis,
// serves the tree and puts Varnish in front.
func startEdgeSite(t *testing.T) *edgeSite { return startEdgeSiteWith(t, nil) }

// startEdgeSiteWith is startEdgeSite with the bundles of more (folder →
// files) in the source folder too, and vclArgs given to serve
// --print-config varnish.
func startEdgeSiteWith(t testing.TB, more map[string]map[string][]byte, vclArgs ...string) *edgeSite {
	t.Helper()
	varnishtest.Varnishd(t)
	root := t.TempDir()
	s := &edgeSite{bin: buildGuidepub(t), src: filepath.Join(root, "src"), out: filepath.Join(root, "out"), priv: filepath.Join(root, "private")}
	for _, b := range []string{"301-king-st-e", "rue-saint-denis"} {
		if err := os.CopyFS(filepath.Join(s.src, b), os.DirFS(filepath.Join("..", "..", "fixtures", "bundles", b))); err != nil {
			t.Fatal(err)
		}
	}
	for folder, files := range more {
		for rel, data := range files {
			p := filepath.Join(s.src, folder, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := exec.Command(s.bin, "export", "--src", s.src, "--out", s.out, "--private", s.priv).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	origin := freeAddr(t)
	waitListening(t, startProc(t, s.bin, "serve", "--dir", s.out, "--addr", origin), origin)
	vcl, err := exec.Command(s.bin, append([]string{"serve", "--addr", origin, "--print-config", "varnish"}, vclArgs...)...).Output()
	if err != nil {
		t.Fatalf("serve --print-config varnish: %v", err)
	}
	s.edgeAddr = varnishtest.Start(t, vcl)
	s.edge = "http://" + s.edgeAddr
	return s
}

// urlsOf returns the URL paths of every public file of the public ids
// ids in the tree out: documents, media, and pages in every form and
// language (their index files' folders).
func urlsOf(t testing.TB, out string, ids ...string) []string {
	t.Helper()
	var urls []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		if site.IsHidden(rel) || compressedSibling(rel) || !slices.Contains(ids, site.PublicIDOf(rel)) {
			return nil
		}
		if _, ok := site.PageKindOf(rel); ok {
			rel = strings.TrimSuffix(rel, "/"+site.PageFile)
		}
		urls = append(urls, "/"+rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return urls
}

// compressedSibling reports whether p is a document's compressed copy.
func compressedSibling(p string) bool {
	for _, suffix := range []string{".br", ".zst", ".gz"} {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

// edgeGet is one answer of the edge.
type edgeGet struct {
	status int
	hit    bool
	body   string
}

// get asks the edge for url, as a client accepting no compression (one
// cached object per encoding: the test reads the identity ones).
func (s *edgeSite) get(t testing.TB, url string) edgeGet {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.edge+url, nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return edgeGet{status: resp.StatusCode, hit: resp.Header.Get("X-Cache") == "HIT", body: string(body)}
}

// hideOnDefaultView sets the hides of the default view (none: it hides
// nothing) of the bundle folder in src, writing guide.json as an upload
// does: a new file renamed into place.
func hideOnDefaultView(t testing.TB, src, folder string, hides ...string) {
	t.Helper()
	p := filepath.Join(src, folder, "guide.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	var hidden []any
	for _, h := range hides {
		hidden = append(hidden, h)
	}
	if view := g["views"].([]any)[0].(map[string]any); len(hidden) > 0 {
		view["hidden"] = hidden
	} else {
		delete(view, "hidden")
	}
	if data, err = json.MarshalIndent(g, "", "  "); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(src, folder, ".guide.json.part")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// TestEdgeFollowsHide: the edge (Varnish) is warmed with every URL of two
// guides' views; the default view of one hides its address and photos
// while `watch --purge` runs: the edge soon serves none of that view's or
// its alias's files with the street, its photos answer 404, and the other
// guide's and the other view's objects are still hits.
func TestEdgeFollowsHide(t *testing.T) {
	s := startEdgeSite(t)
	watch := startProc(t, s.bin, "watch", "--src", s.src, "--out", s.out, "--private", s.priv, "--purge", "varnish+http://"+s.edgeAddr)
	hiding := urlsOf(t, s.out, "vKT301A", "301-king-st-e")
	kept := urlsOf(t, s.out, "vKT301B", "vSTDENIS")
	if len(hiding) < 20 || len(kept) < 20 {
		t.Fatalf("%d and %d URLs", len(hiding), len(kept))
	}
	const street = "King St E"
	var photos []string
	withStreet := 0
	for _, u := range append(slices.Clone(hiding), kept...) {
		s.get(t, u)
		if g := s.get(t, u); !g.hit || g.status != http.StatusOK {
			t.Fatalf("%s: %d, hit %v after warming", u, g.status, g.hit)
		} else if strings.Contains(g.body, street) && slices.Contains(hiding, u) {
			withStreet++
		}
		if strings.Contains(u, "/doc/photos/") && slices.Contains(hiding, u) {
			photos = append(photos, u)
		}
	}
	if withStreet == 0 || len(photos) == 0 {
		t.Fatalf("the warmed edge shows the street in %d files and %d photos", withStreet, len(photos))
	}
	waitLog(t, watch, "watching for uploads")

	start := time.Now()
	hideOnDefaultView(t, s.src, "301-king-st-e", "address", "photos")
	eventually(t, "the edge to stop serving the hidden street and photos", func() bool {
		for _, u := range hiding {
			g := s.get(t, u)
			if strings.Contains(g.body, street) || slices.Contains(photos, u) && g.status != http.StatusNotFound {
				return false
			}
		}
		return true
	})
	t.Logf("the edge followed the hide %v after the upload", time.Since(start).Round(time.Millisecond))
	for _, u := range kept {
		if g := s.get(t, u); !g.hit {
			t.Errorf("%s: no longer a hit after another view's hide", u)
		}
	}
}

// waitLog waits until p's output holds what.
func waitLog(t testing.TB, p *proc, what string) {
	t.Helper()
	eventually(t, "the log to say "+what, func() bool { return strings.Contains(p.out.String(), what) })
}

// TestEdgeAfterOutageAndCrash: the edge's purges fail (an outage) when a
// view hides its address and photos; the watcher is killed (kill -9)
// while they fail, and started again once the edge is back: the hide's
// purge, kept in the private tree, reaches the edge, which then serves
// nothing of what the view hides.
func TestEdgeAfterOutageAndCrash(t *testing.T) {
	s := startEdgeSite(t)
	gate := &varnishtest.PurgeGate{Edge: s.edge}
	gate.Down.Store(true)
	proxy := httptest.NewServer(gate)
	defer proxy.Close()
	args := []string{"watch", "--src", s.src, "--out", s.out, "--private", s.priv, "--purge", "varnish+" + proxy.URL}
	watch := startProc(t, s.bin, args...)
	hiding := urlsOf(t, s.out, "vKT301A", "301-king-st-e")
	const street = "King St E"
	for _, u := range hiding {
		s.get(t, u)
	}
	waitLog(t, watch, "watching for uploads")
	hideOnDefaultView(t, s.src, "301-king-st-e", "address", "photos")
	waitLog(t, watch, "guide exported")
	eventually(t, "a purge to be tried during the outage", func() bool { return gate.Tried.Load() > 0 })
	if err := watch.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-watch.exited
	leaked := 0
	for _, u := range hiding {
		if strings.Contains(s.get(t, u).body, street) {
			leaked++
		}
	}
	if leaked == 0 {
		t.Fatal("the edge followed the hide without a purge: the test shows nothing")
	}
	gate.Down.Store(false)
	startProc(t, s.bin, args...)
	eventually(t, "the edge to stop serving the hidden street after the restart", func() bool {
		for _, u := range hiding {
			g := s.get(t, u)
			if strings.Contains(g.body, street) || strings.Contains(u, "/doc/photos/") && g.status != http.StatusNotFound {
				return false
			}
		}
		return true
	})
}
