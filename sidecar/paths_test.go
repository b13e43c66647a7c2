package sidecar

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUncleanPaths: paths with ".", ".." or "//" and "OPTIONS *" get the
// JSON 404 of an unknown path, not ServeMux's redirect (which put the
// access token of a private document into Location) or an empty 200.
func TestUncleanPaths(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	hs := httptest.NewUnstartedServer(e.srv)
	hs.Config.DisableGeneralOptionsHandler = true // as cmd/guidepub serves it
	hs.Start()
	defer hs.Close()
	for _, target := range []string{
		"/private/g-ready/./gallery.zip?accessToken=secret",
		"/private/g-ready/../g-bob/gallery.zip?accessToken=secret",
		"//private/g-ready/gallery.zip?accessToken=secret",
		"/api/v1//integrations/test",
		"/api/v1/./integrations/test",
		"/healthz/..",
		"*",
	} {
		method := "GET"
		if target == "*" {
			method = "OPTIONS"
		}
		status, header, body := rawRequest(t, hs.Listener.Addr().String(), method, target)
		if status != 404 || header.Get("Location") != "" || header.Get("Cache-Control") != "no-store" ||
			!strings.Contains(header.Get("Content-Type"), "application/json") || !strings.Contains(body, `"not_found"`) {
			t.Errorf("%s %s: %d %v %q, want a JSON 404 with no-store and no Location", method, target, status, header, body)
		}
	}
	for path, want := range map[string]bool{"/": true, "/api/v1/": true, "/a/b": true, "/a//b": false, "/a/./b": false, "/a/..": false, "a": false} {
		if got := cleanPath(path); got != want {
			t.Errorf("cleanPath(%q) = %v, want %v", path, got, want)
		}
	}
}

// rawRequest sends target as written (no client-side cleaning) and reads
// the answer.
func rawRequest(t *testing.T, addr, method, target string) (int, http.Header, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: sidecar.test\r\nConnection: close\r\n\r\n", method, target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header, b.String()
}
