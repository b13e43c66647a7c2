package serve

import (
	"net/http"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// pageHeaders are the extra headers of each kind of view page (site's page
// kinds): a strict Content-Security-Policy (the page loads nothing but its
// own media), and, except for the embedded page, no framing at all (see
// docs/pages.md). They are made once and shared by every response, which
// never modifies them.
var pageHeaders = map[int]http.Header{
	site.PageBranded:   pageHeadersFor(viewpage.Branded),
	site.PageUnbranded: pageHeadersFor(viewpage.Unbranded),
	site.PageEmbedded:  pageHeadersFor(viewpage.Embedded),
}

func pageHeadersFor(k viewpage.Kind) http.Header {
	h := http.Header{}
	h.Set("Content-Security-Policy", viewpage.CSP(k, ""))
	if fo := viewpage.FrameOptions(k); fo != "" {
		h.Set("X-Frame-Options", fo)
	}
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	return h
}

// pageHeadersOf returns the headers of the file p when it is a view page,
// nil for any other file.
func pageHeadersOf(p string) http.Header {
	kind, ok := site.PageKindOf(p)
	if !ok {
		return nil
	}
	return pageHeaders[kind]
}

// robotsTxt lets crawlers in: the branded pages are meant to be found, and
// the unbranded and embedded ones say noindex themselves.
const robotsTxt = "User-agent: *\nAllow: /\n"

// serveRobots answers /robots.txt when the tree has none.
func serveRobots(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", site.DocumentCacheControl)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(robotsTxt))
	}
}
