package serve

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/fixtures"
)

// exchange is what the recording middleware saw of one request.
type exchange struct {
	path, acceptEncoding, contentEncoding string
	status                                int
}

// recorder wraps a handler and records each exchange. A request with the
// query enc=X is served as if it had sent Accept-Encoding: X, so one
// browser can be made to receive each encoding.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []exchange
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := exchange{path: r.URL.Path, acceptEncoding: r.Header.Get("Accept-Encoding")}
	if enc := r.URL.Query().Get("enc"); enc != "" {
		r.Header.Set("Accept-Encoding", enc)
	}
	sw := &statusWriter{ResponseWriter: w, status: 200}
	rec.next.ServeHTTP(sw, r)
	ex.status, ex.contentEncoding = sw.status, w.Header().Get("Content-Encoding")
	rec.mu.Lock()
	rec.seen = append(rec.seen, ex)
	rec.mu.Unlock()
}

func (rec *recorder) find(path string) (exchange, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, ex := range rec.seen {
		if ex.path == path {
			return ex, true
		}
	}
	return exchange{}, false
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

var preText = regexp.MustCompile(`(?s)<pre[^>]*>(.*?)</pre>`)

// TestChromiumDecodes loads documents in headless Chromium: the browser
// asks for br, receives the .br sibling (and, when only gzip is offered,
// the .gz one), and shows the decoded JSON.
func TestChromiumDecodes(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		fixtures.Missing(t, "Chromium", "install the Debian packages chromium and chromium-driver")
	}
	tt := newTestTree()
	root := osTree(t, tt)
	s, err := New(afero.NewOsFs(), root, testConfig(noWatch))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &recorder{next: s}
	hs := httptest.NewServer(rec)
	defer hs.Close()

	tests := []struct {
		path, query, doc, wantEncoding string
	}{
		{"/v1/data/summary", "", "v1/data/summary", "br"},
		{"/v1/data/status", "?enc=gzip", "v1/data/status", "gzip"},
	}
	for _, tc := range tests {
		t.Run(tc.path+tc.query, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "--dump-dom", hs.URL+tc.path+tc.query)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium: %v", err)
			}
			ex, ok := rec.find(tc.path)
			if !ok {
				t.Fatalf("the server saw no request for %s", tc.path)
			}
			if ex.status != 200 || ex.contentEncoding != tc.wantEncoding {
				t.Fatalf("answered %d with Content-Encoding %q, want %q (browser sent Accept-Encoding %q)", ex.status, ex.contentEncoding, tc.wantEncoding, ex.acceptEncoding)
			}
			if !regexp.MustCompile(`\bbr\b`).MatchString(ex.acceptEncoding) {
				t.Errorf("browser Accept-Encoding %q has no br", ex.acceptEncoding)
			}
			m := preText.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no <pre> in the page: %.300s", out)
			}
			var got, want any
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
				t.Fatalf("page text is not JSON: %v: %.200s", err, m[1])
			}
			if err := json.Unmarshal(tt.docs[tc.doc], &want); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(want)
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("browser shows %.200s, want %.200s", gotJSON, wantJSON)
			}
		})
	}
}
