package sidecar

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/sidecar/apitoken"
	"github.com/guidepub/guidepub/site"
	"golang.org/x/net/http/httpguts"
)

// FuzzPortalRequest sends arbitrary methods, paths, queries and header
// values to the real handler (real private tree, SQLite store and queue):
// it must never answer 5xx or panic, and every 401 must be the same body.
func FuzzPortalRequest(f *testing.F) {
	e := newEnv(f, storetestSQLite(f), func(c *Config) { c.RateLimit = 1e6 })
	alice := e.newCred("alice", apitoken.ScopeEvents)
	e.write(site.PrivateDocPath(guideReady, "a/b.pdf"), []byte("pdf"))
	tok, _ := e.events.signer.Issue(guideReady)
	seeds := []struct{ method, path, query, appID, token, hname, hval string }{
		{"GET", objectPath, "taskId=" + workOrder, alice.appID, alice.token, "Accept", "*/*"},
		{"POST", dispatchPath, "", alice.appID, alice.token, "", ""},
		{"POST", testPath, "", alice.appID, alice.token, "Authorization", "Bearer " + alice.token},
		{"GET", deliveriesPath, "", alice.appID, alice.token, "", ""},
		{"POST", deliveriesPath + "/1/retry", "", alice.appID, alice.token, "", ""},
		{"GET", "/private/" + guideReady + "/a/b.pdf", "accessToken=" + url.QueryEscape(tok), "", "", "Range", "bytes=1-"},
		{"HEAD", "/private/" + guideReady + "/a/b.pdf", "accessToken=" + url.QueryEscape(tok), "", "", "If-None-Match", `"x"`},
		{"GET", "/private/" + guideReady + "/../record.json", "accessToken=" + tok, "", "", "Range", "bytes=5-1,9-"},
		{"GET", "/private/%2e%2e/x", "accessToken=%zz", "", "", "If-Range", "Mon, 02 Jan 2006"},
		{"GET", "/api/v1/guides/%00/events/ready/object", "taskId=%", "x", "y", "X-Svc-AppId", "z"},
		{"OPTIONS", "*", "", "", "", "", ""},
		{"GET", "/healthz", "", "", "", "", ""},
		{"GET", "/metrics", "", "", "", "Accept", "application/openmetrics-text"},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.appID, s.token, s.hname, s.hval)
	}
	var body401 []byte
	f.Fuzz(func(t *testing.T, method, path, query, appID, token, hname, hval string) {
		if !validMethod(method) {
			t.Skip() // net/http rejects the request line before any handler
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			t.Skip()
		}
		r := &http.Request{
			Method: method, URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: http.NoBody, Host: "sidecar.test", RemoteAddr: "127.0.0.1:1234",
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r = r.WithContext(ctx)
		for _, h := range [][2]string{{HeaderAppID, appID}, {HeaderAppToken, token}, {hname, hval}} {
			if h[0] == "" || h[1] == "" {
				continue
			}
			if !httpguts.ValidHeaderFieldName(h[0]) || !httpguts.ValidHeaderFieldValue(h[1]) {
				t.Skip()
			}
			r.Header.Add(h[0], h[1])
		}
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %q: status %d, body %s", method, target, w.Code, w.Body)
		}
		if w.Code == http.StatusUnauthorized {
			if body401 == nil {
				body401 = bytes.Clone(w.Body.Bytes())
			}
			if !bytes.Equal(w.Body.Bytes(), body401) {
				t.Fatalf("401 body %q, earlier %q", w.Body, body401)
			}
		}
		redirect := w.Code == http.StatusMovedPermanently || w.Code == http.StatusTemporaryRedirect || w.Code == http.StatusPermanentRedirect
		if ct := w.Header().Get("Content-Type"); strings.HasPrefix(u.Path, "/api/") && !redirect && ct != "application/json" {
			t.Fatalf("%s %q: status %d with Content-Type %q", method, target, w.Code, ct)
		}
	})
}

// validMethod reports whether m is an HTTP token, as net/http requires.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		if !httpguts.IsTokenRune(rune(m[i])) {
			return false
		}
	}
	return true
}
