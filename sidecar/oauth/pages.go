package oauth

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
)

//go:embed templates/*.html templates/style.css
var templateFS embed.FS

var (
	pageStyle = mustRead("templates/style.css")
	// styleHash is the CSP hash of the inline style: the pages load nothing
	// else, so the policy allows nothing else.
	styleHash = func() string {
		sum := sha256.Sum256([]byte(pageStyle))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}()
	pages = map[string]*template.Template{
		"signin":  mustParse("signin"),
		"consent": mustParse("consent"),
		"error":   mustParse("error"),
	}
)

func mustRead(name string) string {
	b, err := templateFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func mustParse(name string) *template.Template {
	return template.Must(template.ParseFS(templateFS, "templates/page.html", "templates/"+name+".html"))
}

// pageData is what every page shows; the rest is per page.
type pageData struct {
	Title    string
	Style    template.CSS
	Error    string
	AppName  string
	CSRF     string
	Next     string
	Username string
	Owner    string
	Action   string
	Scopes   []scopeLine
}

type scopeLine struct{ Name, Words string }

// render writes page with status and a strict Content-Security-Policy:
// nothing loads but the inline style, forms post only to formAction, and no
// site may frame the page.
func render(w http.ResponseWriter, status int, page string, d pageData, formAction string) {
	d.Style = template.CSS(pageStyle)
	var buf bytes.Buffer
	if err := pages[page].ExecuteTemplate(&buf, "page", d); err != nil {
		http.Error(w, "page could not be rendered", http.StatusInternalServerError)
		return
	}
	if formAction == "" {
		formAction = "'self'"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src "+styleHash+"; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
