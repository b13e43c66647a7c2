package main

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/guidepub/guidepub/site"
)

// Dev's own pages: templates in devpages/, each a "body" inside page.html,
// with page.css inline (allowed by its hash, nothing else loads).
var (
	//go:embed devpages/*.html devpages/page.css
	devPagesFS      embed.FS
	devStyle        = mustRead(devPagesFS, "devpages/page.css")
	devManagePage   = devPage("devpages/manage.html")
	devCallbackPage = devPage("devpages/callback.html")
	devPageCSP      = "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sha256Sum(devStyle)) + "'; frame-ancestors 'none'"
)

// devPage parses page.html with the body template file.
func devPage(file string) *template.Template {
	funcs := template.FuncMap{"devStyle": func() template.CSS { return template.CSS(devStyle) }}
	return template.Must(template.New("page").Funcs(funcs).ParseFS(devPagesFS, "devpages/page.html", file))
}

// mustRead returns an embedded file's text.
func mustRead(fsys embed.FS, name string) string {
	b, err := fsys.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sha256Sum returns the SHA-256 of s.
func sha256Sum(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// devManagePattern routes a ready event's manageUrl to devManage.
const devManagePattern = "GET /guides/{guideId}"

// devCallbackPath is the redirect URI path of dev's sample OAuth app. Like
// devReceiverPath, it has a '.', so no view can shadow it.
const devCallbackPath = "/dev.callback"

// writeDevPage renders page with data, with headers that keep it to
// itself: nothing loads, nothing frames it, nothing caches it (a callback
// shows a code).
func writeDevPage(w http.ResponseWriter, page *template.Template, data any) {
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "page", data); err != nil {
		http.Error(w, "page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", devPageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.Write(buf.Bytes())
}

// devManage answers a ready event's manageUrl, <base-url>/guides/<guideId>,
// which in production is the Portal's page of the guide, with a page that
// says so and links the guide's views, documents and Portal API paths.
// Anything else under /guides/ is the static server's: a guide that is not
// published, and every path when a view or alias is named "guides".
type devManage struct {
	priv, out string
	static    http.Handler
}

func (m devManage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if fi, err := os.Stat(filepath.Join(m.out, "guides")); err == nil && fi.IsDir() {
		m.static.ServeHTTP(w, r)
		return
	}
	rec, err := readRecord(m.priv, r.PathValue("guideId"))
	if err != nil {
		m.static.ServeHTTP(w, r)
		return
	}
	type view struct {
		ID                string
		Default, Autofill bool // a view that is not ready, or hides it, has no autofill
	}
	var views []view
	for _, v := range rec.ViewIDs {
		_, err := os.Stat(filepath.Join(m.out, filepath.FromSlash(site.ViewFile(v, site.AutofillFile))))
		views = append(views, view{v, v == rec.DefaultViewID, err == nil})
	}
	writeDevPage(w, devManagePage, map[string]any{"Title": "Guide " + rec.GuideID, "Record": rec, "Views": views})
}

// devCallback is the redirect URI of dev's sample OAuth app: it shows the
// code the browser brought back and, for the state of an authorize URL dev
// printed, the exchange command with the matching code_verifier.
type devCallback struct {
	mu    sync.Mutex
	tries map[string]oauthTry // by state
}

// add makes t's state known, so its code's page shows the exchange.
func (cb *devCallback) add(t oauthTry) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.tries == nil {
		cb.tries = map[string]oauthTry{}
	}
	cb.tries[t.state] = t
}

func (cb *devCallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	data := map[string]string{"Title": "Back at the app", "Code": q.Get("code"), "State": q.Get("state"),
		"Error": q.Get("error"), "ErrorDescription": q.Get("error_description")}
	if data["Error"] == "" && data["Code"] == "" {
		data["Error"], data["ErrorDescription"] = "invalid_request", "no code: open the authorize URL dev printed"
	}
	cb.mu.Lock()
	t, ok := cb.tries[data["State"]]
	cb.mu.Unlock()
	if ok && data["Code"] != "" {
		data["Exchange"], data["API"] = t.exchangeCommand(data["Code"]), t.apiCommand()
	}
	if !acceptsHTML(r) {
		writeCallbackText(w, data)
		return
	}
	writeDevPage(w, devCallbackPage, data)
}

// acceptsHTML reports whether r's Accept names text/html, as a browser's
// does; curl's (*/*) does not.
func acceptsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/html") {
			return true
		}
	}
	return false
}

// writeCallbackText writes the callback page's data as plain text, for a
// client that is not a browser (curl): the commands as they are, to paste
// into a shell, where the HTML page would have them HTML-escaped.
func writeCallbackText(w http.ResponseWriter, data map[string]string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	var b strings.Builder
	switch {
	case data["Error"] != "":
		fmt.Fprintf(&b, "The authorization server sent the browser back with %s", data["Error"])
		if d := data["ErrorDescription"]; d != "" {
			fmt.Fprintf(&b, ": %s", d)
		}
		b.WriteString(".\n")
	case data["Exchange"] == "":
		fmt.Fprintf(&b, "Code: %s\nThis state (%s) is not the one of the authorize URL dev printed, so dev does not know its\n"+
			"code_verifier: exchange the code with the verifier whose challenge was in the URL you opened.\n", data["Code"], data["State"])
	default:
		fmt.Fprintf(&b, "Code: %s (state %s)\nExchange it for tokens, within 10 minutes (a code works once):\n%s\n"+
			"Then call the Portal API with the answer's access_token:\nACCESS_TOKEN=ory_at_…\n%s\n",
			data["Code"], data["State"], data["Exchange"], data["API"])
	}
	io.WriteString(w, b.String())
}
