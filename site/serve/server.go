package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// Server serves an exported public tree as a CDN would: it negotiates the
// precompressed sibling by Accept-Encoding, sets the headers of package
// site, answers conditional, HEAD and range requests, and never serves a
// hidden file, a compressed sibling by its own name, a symbolic link or a
// path outside the root.
//
// Nothing is read at start. A request reads the files it needs; documents
// and small files stay in a cache bounded by Config.CacheBytes, and larger
// media stream from disk (with sendfile on Linux). The tree is watched, and
// a change drops what it touched from the cache. See docs/serving.md.
type Server struct {
	src     source
	cfg     Config
	logger  *slog.Logger
	cache   *otter.Cache[string, *entry] // nil when Config.CacheBytes is zero
	started time.Time

	epoch  atomic.Uint64 // see cache.go
	gen    atomic.Uint64
	window atomic.Int64 // < 0: cached entries are trusted until a change is reported; else checked when older

	mu        sync.Mutex
	watcher   *watcher
	watchDone chan struct{} // closed when the watcher is set up or has failed; nil when not watching
	closed    bool
}

// New returns a Server for the tree at root of fsys. It reads nothing but
// the root folder, so it returns at once whatever the size of the tree,
// and it returns an error when root is not a folder. Unless cfg.NoWatch or
// cfg.Poll, a tree on the operating system's file system is watched (the
// watches are set up in the background); Close stops that.
func New(fsys afero.Fs, root string, cfg Config) (*Server, error) {
	if fsys == nil {
		return nil, errors.New("serve: no file system")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if len(site.Encodings) != numEncodings {
		return nil, fmt.Errorf("serve: built for %d encodings, site lists %d", numEncodings, len(site.Encodings))
	}
	root = filepath.Clean(root)
	if fi, err := fsys.Stat(root); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("serve: %s is not a folder", root)
	}
	src, dir, err := openSource(fsys, root)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{src: src, cfg: cfg, logger: logger, cache: newCache(cfg.CacheBytes), started: time.Now()}
	s.window.Store(-1)
	switch {
	case dir == "" || cfg.NoWatch:
	case cfg.Poll > 0:
		s.window.Store(int64(cfg.Poll))
	default:
		s.watchDone = make(chan struct{})
		go s.watch(dir)
	}
	return s, nil
}

// watch sets up the watcher on dir. Entries read before it is in place
// are checked once more afterwards; if it cannot be set up (too many
// folders for inotify, say) every entry is checked when older than
// PollInterval instead.
func (s *Server) watch(dir string) {
	defer close(s.watchDone)
	w, err := startWatcher(dir, s.cfg.Debounce, s, s.logger)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		if w != nil {
			w.close()
		}
		return
	}
	if err != nil {
		s.logger.Warn("serve: cannot watch the tree; checking cached files instead", "dir", dir, "every", s.cfg.PollInterval, "err", err)
		s.window.Store(int64(s.cfg.PollInterval))
	} else {
		s.watcher = w
	}
	s.Reload()
}

// Close stops watching the tree and releases the root folder. It returns
// the watcher's error, if any. Afterwards the Server still answers what it
// holds in its cache; every other path gets 404.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.watchDone != nil {
		<-s.watchDone
	}
	var err error
	if s.watcher != nil {
		err = s.watcher.close()
	}
	s.src.close()
	return err
}

// Header values, shared and never modified.
var (
	hdrNosniff        = []string{"nosniff"}
	hdrVary           = []string{"Accept-Encoding"}
	hdrJSON           = []string{"application/json"}
	hdrNoStore        = []string{"no-store"}
	hdrAllow          = []string{"GET, HEAD"}
	bodyNotFound      = []byte(`{"code":"not_found"}` + "\n")
	bodyNotAllowed    = []byte(`{"code":"method_not_allowed"}` + "\n")
	bodyNotAcceptable = []byte(`{"code":"not_acceptable"}` + "\n")
)

// ServeHTTP answers GET and HEAD for the files of the tree; see Server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["X-Content-Type-Options"] = hdrNosniff
	escaped := r.URL.EscapedPath()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		setKeyHeaders(h, escaped)
		h["Allow"] = hdrAllow
		writeError(w, r, http.StatusMethodNotAllowed, bodyNotAllowed)
		return
	}
	if to, ok := pageWithoutSlash(escaped); ok {
		if q := r.URL.RawQuery; q != "" {
			to += "?" + q
		}
		setKeyHeaders(h, escaped)
		h["Location"] = []string{to}
		h["Cache-Control"] = []string{site.DocumentCacheControl}
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	name, ok := cleanRequestPath(escaped)
	if !ok {
		setKeyHeaders(h, escaped)
		notFound(w, r)
		return
	}
	acc := parseAcceptEncoding(r.Header["Accept-Encoding"])
	e, rep, body, err := s.find(name, &acc)
	if body != nil {
		defer body.Close()
	}
	if e == nil {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.logger.Error("serve: read", "path", name, "err", err)
		}
		if name == "robots.txt" {
			serveRobots(w, r)
			return
		}
		setKeyHeaders(h, escaped)
		notFound(w, r)
		return
	}
	for k, v := range e.pageHeaders {
		h[k] = v
	}
	for k, v := range e.keyHeaders {
		h[k] = v
	}
	if e.document {
		h["Vary"] = hdrVary
	}
	if rep == nil {
		writeError(w, r, http.StatusNotAcceptable, bodyNotAcceptable)
		return
	}
	for k, v := range e.cacheHeaders {
		h[k] = v
	}
	h["Etag"] = rep.etag
	if err := respond(w, r, rep, e.contentType, body); err != nil {
		s.logger.Debug("serve: write", "path", name, "err", err)
	}
}

// find returns the entry for the request path name and its
// representation that acc chooses: from the cache, or read now. /<id>,
// /u/<id> and /embed/<id> name a view's page, stored as index.html in that
// folder. For a file that streams from disk it returns the open file too.
// The entry comes with a nil representation when acc accepts none of its
// representations, and is nil when there is no such file.
func (s *Server) find(name string, acc *acceptance) (*entry, *representation, file, error) {
	if _, _, sibling := site.SplitEncoded(name); sibling {
		return nil, nil, nil, fs.ErrNotExist // served only by negotiation
	}
	names, n := [2]string{name}, 1
	if maybePage(name) {
		if stored, ok := site.PageOf("/" + name); ok {
			names, n = [2]string{stored, name}, 2
		}
	}
	for range 3 {
		e, rep, body, err := s.findOnce(names[:n], acc)
		if errors.Is(err, errStale) {
			e.marks.Add(1) // check it, and read it again, next time round
			continue
		}
		if errors.Is(err, errNotAcceptable) {
			err = nil
		}
		return e, rep, body, err
	}
	return nil, nil, nil, fmt.Errorf("serve: %s keeps changing while it is read", name)
}

// findOnce is one try of find for the candidate paths names.
func (s *Server) findOnce(names []string, acc *acceptance) (*entry, *representation, file, error) {
	for _, n := range names {
		if e := s.cached(n); e != nil {
			rep, err := s.choose(e, acc, nil)
			return e, rep, nil, err
		}
	}
	var err error
	for _, n := range names {
		var e *entry
		var rep *representation
		var body file
		e, rep, body, err = s.load(n, acc)
		if !errors.Is(err, fs.ErrNotExist) {
			return e, rep, body, err
		}
	}
	return nil, nil, nil, err
}

// maybePage reports whether name has the shape of a page URL (one path
// element and a language, or two under u/ or embed/), before site.PageOf
// checks it.
func maybePage(name string) bool {
	switch strings.Count(name, "/") {
	case 0, 1:
		return true
	case 2:
		return strings.HasPrefix(name, site.UnbrandedDir+"/") || strings.HasPrefix(name, site.EmbedDir+"/")
	}
	return false
}

// pageWithoutSlash returns the URL of the page that the escaped request
// path names with a trailing slash ("/vKT301A/" → "/vKT301A"), and false
// for any other path: a page has one URL, without the slash.
func pageWithoutSlash(escaped string) (string, bool) {
	trimmed, ok := strings.CutSuffix(escaped, "/")
	if !ok || trimmed == "" {
		return "", false
	}
	name, ok := cleanRequestPath(trimmed)
	if !ok || !maybePage(name) {
		return "", false
	}
	if _, ok := site.PageOf("/" + name); !ok {
		return "", false
	}
	return trimmed, true
}

// setKeyHeaders sets the surrogate key headers (site.SurrogateKeyHeaders)
// of the escaped request path on h, when it has a key: the answers for a
// missing file of a public id carry its key, so that a purge of the id
// evicts them from the edge with its files.
func setKeyHeaders(h http.Header, escaped string) {
	k, ok := site.SurrogateKeyOf(escaped)
	if !ok {
		return
	}
	v := []string{k}
	for _, n := range keyHeaderNames {
		h[n] = v
	}
}

// The edge headers of site.FileHeaders in canonical form.
var (
	hdrSurrogateControl = http.CanonicalHeaderKey(site.SurrogateControl)
	hdrCDNCacheControl  = http.CanonicalHeaderKey(site.CDNCacheControl)
)

// keyHeaderNames are site.SurrogateKeyHeaders in canonical form.
var keyHeaderNames = func() []string {
	names := make([]string, len(site.SurrogateKeyHeaders))
	for i, n := range site.SurrogateKeyHeaders {
		names[i] = http.CanonicalHeaderKey(n)
	}
	return names
}()

// notFound answers 404: the HTML page of viewpage.NotFound to a browser
// (a request that accepts text/html), the JSON body to anything else.
func notFound(w http.ResponseWriter, r *http.Request) {
	if !acceptsHTML(r.Header.Values("Accept")) {
		writeError(w, r, http.StatusNotFound, bodyNotFound)
		return
	}
	h := w.Header()
	for k, v := range notFoundHeaders {
		h[k] = v
	}
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		w.Write(viewpage.NotFound)
	}
}

// notFoundHeaders are the headers of the HTML 404 page.
var notFoundHeaders = http.Header{
	"Content-Type":            {site.PageType},
	"Cache-Control":           hdrNoStore,
	"Content-Length":          {strconv.Itoa(len(viewpage.NotFound))},
	"Content-Security-Policy": {viewpage.NotFoundCSP},
	"Referrer-Policy":         {"strict-origin-when-cross-origin"},
}

// acceptsHTML reports whether the Accept field values name text/html
// with a non-zero quality: what browsers send for a navigation, and API
// clients do not.
func acceptsHTML(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			typ, params, _ := strings.Cut(part, ";")
			if !strings.EqualFold(strings.TrimSpace(typ), "text/html") {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(val, 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// cleanRequestPath maps the escaped URL path of a request to the
// slash-separated path of a public file, or ok false when the path can
// never name one: it must be absolute and clean, and may not contain
// encoded slashes or backslashes, backslashes, NUL or other control
// characters, or a hidden element.
func cleanRequestPath(escaped string) (string, bool) {
	if len(escaped) < 2 || escaped[0] != '/' {
		return "", false
	}
	lower := strings.ToLower(escaped)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%00") {
		return "", false
	}
	p := escaped[1:]
	if strings.IndexByte(p, '%') >= 0 {
		var err error
		// Unescape only what names a file; every separator is already known
		// to be a real one.
		if p, err = url.PathUnescape(p); err != nil {
			return "", false
		}
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "", false
		}
	}
	if path.Clean("/"+p) != "/"+p || site.IsHidden(p) {
		return "", false
	}
	return p, true
}

// errorLengths holds the Content-Length values of the error bodies.
var errorLengths = map[int][]string{}

func init() {
	for _, b := range [][]byte{bodyNotFound, bodyNotAllowed, bodyNotAcceptable, bodyPreconditionFailed, bodyRangeNotSatisfiable} {
		errorLengths[len(b)] = []string{strconv.Itoa(len(b))}
	}
}

// writeError writes a JSON error body with status code. The body is not
// cached: the file may appear with the next export, so the edge headers
// of a file (a 412 or 416 of one) go too.
func writeError(w http.ResponseWriter, r *http.Request, code int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Cache-Control"] = hdrNoStore
	delete(h, hdrSurrogateControl)
	delete(h, hdrCDNCacheControl)
	h["Content-Length"] = errorLengths[len(body)]
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
