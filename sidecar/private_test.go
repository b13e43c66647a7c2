package sidecar

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site"
)

func TestPrivateDocuments(t *testing.T) {
	e := newEnv(t, storetestSQLite(t), nil)
	content := []byte(strings.Repeat("0123456789", 100))
	e.write(site.PrivateDocPath(guideReady, "plans/floor 1.pdf"), content)
	e.write(site.PrivateDocPath(guideReady, "gallery.zip"), []byte("zip"))
	e.write(site.PrivateDocPath(guideReady, ".hidden"), []byte("secret"))
	e.write(site.PrivateDocPath(guideOther, "bob.zip"), []byte("bob's"))
	e.write("outside.txt", []byte("outside"))
	secretDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, "passwd"), []byte("root"), 0o644); err != nil {
		t.Fatal(err)
	}
	docDir := filepath.Join(e.dir, filepath.FromSlash(site.PrivateDocPath(guideReady, "")))
	if err := os.Symlink(filepath.Join(secretDir, "passwd"), filepath.Join(docDir, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretDir, filepath.Join(docDir, "linkdir")); err != nil {
		t.Fatal(err)
	}

	tok, _ := e.events.signer.Issue(guideReady)
	bobTok, _ := e.events.signer.Issue(guideOther)
	doc := func(rel, token string) string {
		return "/private/" + guideReady + "/" + rel + "?accessToken=" + url.QueryEscape(token)
	}
	pdf := doc("plans/floor%201.pdf", tok)

	t.Run("GET", func(t *testing.T) {
		w := e.do("GET", pdf, nil, nil)
		if w.Code != 200 || w.Body.String() != string(content) {
			t.Fatalf("status %d, %d bytes", w.Code, w.Body.Len())
		}
		for k, v := range map[string]string{
			"Content-Type": "application/pdf", "Cache-Control": PrivateCacheControl,
			"X-Content-Type-Options": "nosniff", "Accept-Ranges": "bytes",
		} {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %q, want %q", k, got, v)
			}
		}
		etag := w.Header().Get("ETag")
		if len(etag) != 34 || etag[0] != '"' || strings.HasPrefix(etag, "W/") {
			t.Fatalf("ETag %q is not a strong content hash", etag)
		}
		t.Run("304", func(t *testing.T) {
			w := e.do("GET", pdf, nil, http.Header{"If-None-Match": {etag}})
			if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
				t.Fatalf("status %d, %d bytes", w.Code, w.Body.Len())
			}
		})
		t.Run("changed content changes ETag", func(t *testing.T) {
			e.write(site.PrivateDocPath(guideReady, "plans/floor 1.pdf"), append(content, 'x'))
			defer e.write(site.PrivateDocPath(guideReady, "plans/floor 1.pdf"), content)
			w := e.do("GET", pdf, nil, http.Header{"If-None-Match": {etag}})
			if w.Code != 200 || w.Header().Get("ETag") == etag {
				t.Fatalf("status %d, ETag %s", w.Code, w.Header().Get("ETag"))
			}
		})
	})
	t.Run("Range", func(t *testing.T) {
		w := e.do("GET", pdf, nil, http.Header{"Range": {"bytes=10-19"}})
		if w.Code != http.StatusPartialContent || w.Body.String() != string(content[10:20]) {
			t.Fatalf("status %d body %q", w.Code, w.Body)
		}
		if cr := w.Header().Get("Content-Range"); cr != "bytes 10-19/1000" {
			t.Fatalf("Content-Range %q", cr)
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		w := e.do("HEAD", pdf, nil, nil)
		if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "1000" {
			t.Fatalf("status %d, %d bytes, length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
		}
	})

	expired := newEnvSigner(e, -22*24*time.Hour)
	unauthenticated := map[string]string{
		"no token":              "/private/" + guideReady + "/gallery.zip",
		"empty token":           doc("gallery.zip", ""),
		"garbage token":         doc("gallery.zip", "not-a-token"),
		"tampered token":        doc("gallery.zip", tok[:len(tok)-2]+"AA"),
		"other guide's token":   doc("gallery.zip", bobTok),
		"expired token":         doc("gallery.zip", expired),
		"token in header":       "/private/" + guideReady + "/gallery.zip",
		"missing doc, no token": "/private/" + guideReady + "/nope.zip",
	}
	for name, target := range unauthenticated {
		t.Run("401 "+name, func(t *testing.T) {
			w := e.do("GET", target, nil, http.Header{"Authorization": {"Bearer " + tok}})
			wantError(t, w, 401, CodeUnauthenticated)
			if w.Body.String() != `{"code":"unauthenticated"}`+"\n" {
				t.Fatalf("body %q", w.Body)
			}
		})
	}
	notFound := map[string]string{
		"missing":             doc("nope.zip", tok),
		"folder":              doc("plans", tok),
		"dot file":            doc(".hidden", tok),
		"encoded dot-dot":     doc("plans%2F..%2F..%2Frecord.json", tok),
		"encoded dot-dot up":  doc("..%2F..%2F..%2Foutside.txt", tok),
		"encoded slash root":  doc("%2Fetc%2Fpasswd", tok),
		"backslash":           doc("..%5C..%5Coutside.txt", tok),
		"symlink file":        doc("link.pdf", tok),
		"through symlink dir": doc("linkdir/passwd", tok),
		"empty element":       doc("plans//floor%201.pdf", tok),
		"NUL":                 doc("gallery.zip%00", tok),
	}
	for name, target := range notFound {
		t.Run("404 "+name, func(t *testing.T) {
			w := e.do("GET", target, nil, nil)
			if w.Code == 200 {
				t.Fatalf("served %q", w.Body)
			}
			if w.Code != 404 && w.Code != http.StatusMovedPermanently && w.Code != http.StatusTemporaryRedirect {
				t.Fatalf("status %d body %s", w.Code, w.Body)
			}
		})
	}
	t.Run("other guide's document with own token", func(t *testing.T) {
		w := e.do("GET", "/private/"+guideOther+"/bob.zip?accessToken="+url.QueryEscape(tok), nil, nil)
		wantError(t, w, 401, CodeUnauthenticated)
		w = e.do("GET", "/private/"+guideOther+"/bob.zip?accessToken="+url.QueryEscape(bobTok), nil, nil)
		if w.Code != 200 || w.Body.String() != "bob's" {
			t.Fatalf("bob's own document: %d %q", w.Code, w.Body)
		}
	})
	t.Run("unclean path is not served", func(t *testing.T) {
		w := e.do("GET", "/private/"+guideReady+"/../../outside.txt?accessToken="+url.QueryEscape(tok), nil, nil)
		if w.Code == 200 {
			t.Fatalf("served %q", w.Body)
		}
	})
}

// newEnvSigner returns a token for guideReady issued age ago by e's signer.
func newEnvSigner(e *env, age time.Duration) string {
	e.clock.Advance(age)
	defer e.clock.Advance(-age)
	tok, _ := e.events.signer.Issue(guideReady)
	return tok
}

func TestSafeRel(t *testing.T) {
	for rel, want := range map[string]bool{
		"a.pdf": true, "plans/floor 1.pdf": true, "a/b/c.zip": true,
		"": false, ".": false, "..": false, "../a": false, "a/../b": false, "/a": false,
		"a//b": false, "a/": false, ".env": false, "a/.git/config": false, `a\b`: false,
		"a\x00b": false, "c:x": false,
	} {
		if got := safeRel(rel); got != want {
			t.Errorf("safeRel(%q) = %v, want %v", rel, got, want)
		}
	}
}
