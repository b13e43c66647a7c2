package leaksweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter"
	"github.com/guidepub/guidepub/exporter/edge"
	"github.com/guidepub/guidepub/exporter/pipeline"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/serve"
	"github.com/guidepub/guidepub/site/serve/varnishtest"
)

// The edge channel: the corpus published without its hides to a tree
// that guidepub serve serves behind Varnish (the printed VCL, a day's
// TTL), the edge warmed with every public URL; then the hides exported
// while the edge refuses every purge (an outage) and the process dies
// before one goes through; a new process sends the owed purges once the
// edge is back. The edge's answer to every URL is the channel.

// throughEdge runs the edge scenario on c and returns the edge channel.
func throughEdge(t *testing.T, c *corpus) []channel {
	varnishtest.Varnishd(t)
	dir := t.TempDir()
	src, out, priv := filepath.Join(dir, "src"), filepath.Join(dir, "public"), filepath.Join(dir, "private")
	cfg := exporter.DefaultConfig()
	cfg.Encodings = []site.Encoding{site.Gzip}
	osfs := afero.NewOsFs()
	cfg.Src, cfg.SrcDir, cfg.Out, cfg.OutDir, cfg.Private, cfg.PrivateDir = osfs, src, osfs, out, osfs, priv
	ex, err := exporter.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.write(t, src, false)
	if _, err := ex.ExportAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	edgeURL := startEdge(t, out)
	urls := publicURLs(t, out)
	fetchAll(t, edgeURL, urls) // warm

	gate := &varnishtest.PurgeGate{Edge: edgeURL}
	gate.Down.Store(true)
	gateSrv := httptest.NewServer(gate)
	t.Cleanup(gateSrv.Close)
	purger, err := edge.Parse("varnish+"+gateSrv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ecfg := edge.Config{Dir: filepath.Join(priv, site.PurgesDir), Purger: purger, Delay: time.Second,
		RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}
	q := openEdge(t, ecfg)
	p := pipeline.New(pipeline.Config{Edge: q})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { p.Run(ctx); close(ran) }()
	c.write(t, src, true)
	if _, _, err := p.ExportAll(context.Background(), func(each func(exporter.GuideResult)) (*exporter.Report, error) {
		return ex.ExportAllEach(context.Background(), each)
	}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); gate.Tried.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no purge was tried during the outage")
		}
	}
	cancel() // the process dies, its purges not taken
	<-ran
	q.Close()
	if hiddenFound(c, search(c, channel{files: fetchAll(t, edgeURL, urls)})) == 0 {
		t.Fatal("the edge served nothing the views now hide before its purges: the scenario tests nothing")
	}

	gate.Down.Store(false) // the edge is back; a new process
	q = openEdge(t, ecfg)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	idle, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	if n := q.Idle(idle); n != 0 {
		t.Fatalf("%d purges still owed after the restart", n)
	}
	return []channel{{name: "edge", files: fetchAll(t, edgeURL, urls)}}
}

// hiddenFound returns how many of the fields the corpus's bundles hide
// found holds.
func hiddenFound(c *corpus, found map[string][]string) int {
	n := 0
	for _, b := range c.bundles {
		for _, f := range fields {
			hidden := slices.ContainsFunc(f.hiddenBy, func(h string) bool { return slices.Contains(b.hidden, h) })
			if hidden && b.needle[f.pattern] != "" && len(found[fieldKey(b, f)]) > 0 {
				n++
			}
		}
	}
	return n
}

// openEdge opens the purge queue of cfg, closed when the test ends.
func openEdge(t *testing.T, cfg edge.Config) *edge.Edge {
	q, err := edge.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// startEdge serves the tree out with guidepub serve and puts Varnish, with
// the VCL serve prints, in front; it returns the edge's base URL.
func startEdge(t *testing.T, out string) string {
	srv, err := serve.New(afero.NewOsFs(), out, serve.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(srv)
	t.Cleanup(func() { origin.Close(); srv.Close() })
	var vcl bytes.Buffer
	if err := serve.WriteConfig(&vcl, "varnish", serve.ConfigOptions{Listen: strings.TrimPrefix(origin.URL, "http://")}); err != nil {
		t.Fatal(err)
	}
	return "http://" + varnishtest.Start(t, vcl.Bytes())
}

// publicURLs returns the URL of every public file of the tree out: its
// documents and media, and its pages by their URLs.
func publicURLs(t *testing.T, out string) []string {
	var urls []string
	for _, f := range treeFiles(t, out) {
		if _, _, sibling := site.SplitEncoded(f.name); sibling || site.IsHidden(f.name) {
			continue
		}
		u := f.name
		if _, ok := site.PageKindOf(u); ok {
			u = strings.TrimSuffix(u, "/"+site.PageFile)
		}
		urls = append(urls, "/"+u)
	}
	return urls
}

// fetchAll asks the edge for every URL (as a client taking no
// compression) and returns the answers as public files: a file served
// (200) is named by its URL, which the search then reads as published;
// another answer (a 404 for a file withdrawn) by its status alone, since
// the URL asked for is the test's, not the edge's.
func fetchAll(t *testing.T, base string, urls []string) []publicFile {
	var files []publicFile
	for _, u := range urls {
		req, _ := http.NewRequest(http.MethodGet, base+u, nil)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name := "edge " + u
		if resp.StatusCode != http.StatusOK {
			name = fmt.Sprintf("edge answer %d #%d", resp.StatusCode, len(files))
		}
		files = append(files, publicFile{name: name, data: body})
	}
	return files
}
