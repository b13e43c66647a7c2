package sidecar

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// TestOAuthMethodNotAllowed: a known OAuth path asked with another method
// is answered 405 with Allow, as every known path is (docs/sidecar.md).
func TestOAuthMethodNotAllowed(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/oauth/token", "POST"},
		{"PUT", "/oauth/token", "POST"},
		{"GET", "/oauth/revoke", "POST"},
		{"PUT", "/oauth/revoke", "POST"},
		{"DELETE", "/oauth/authorize", "GET, HEAD, POST"},
		{"PUT", "/oauth/signin", "GET, HEAD, POST"},
		{"POST", "/.well-known/oauth-authorization-server", "GET, HEAD"},
	} {
		req, _ := http.NewRequest(tc.method, e.http.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 with Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.allow)
		}
	}
}

// TestEveryRouteAnswersOtherMethods walks the route table the Server
// registers (the OAuth endpoints included), so that a route added to it is
// checked too: each path answers its own methods (HEAD with GET), and
// every other method with a JSON 405 whose Allow lists exactly its
// methods.
func TestEveryRouteAnswersOtherMethods(t *testing.T) {
	e := newOAuthEnv(t, storetestSQLite(t))
	srv, err := New(Config{PrivateFS: afero.NewOsFs(), PrivateDir: e.dir, Logger: slog.New(slog.DiscardHandler), OAuth: e.auth},
		e.store, e.queue, e.events)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string][]string{}
	for _, rt := range srv.routeTable() {
		allowed[rt.path] = append(allowed[rt.path], rt.method)
		if rt.method == "GET" {
			allowed[rt.path] = append(allowed[rt.path], "HEAD")
		}
	}
	if len(allowed) < 15 {
		t.Fatalf("the route table has %d paths, want the API's, the operations' and the OAuth endpoints'", len(allowed))
	}
	wildcard := regexp.MustCompile(`\{[A-Za-z]+(\.\.\.)?\}`)
	for pattern, methods := range allowed {
		slices.Sort(methods)
		allow := strings.Join(methods, ", ")
		path := wildcard.ReplaceAllString(pattern, "x")
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, httptest.NewRequest(m, path, nil))
			switch {
			case slices.Contains(methods, m) && w.Code == 405:
				t.Errorf("%s %s (route %s): 405, want it answered", m, path, pattern)
			case !slices.Contains(methods, m) && (w.Code != 405 || w.Header().Get("Allow") != allow ||
				!strings.Contains(w.Body.String(), `"code":"invalid_argument"`)):
				t.Errorf("%s %s (route %s): %d Allow %q %s, want a JSON 405 with Allow %q",
					m, path, pattern, w.Code, w.Header().Get("Allow"), w.Body.String(), allow)
			}
		}
	}
}
