package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
)

// Defaults of Config.
const (
	DefaultMemoryLimit  = 1 << 20
	DefaultDebounce     = 30 * time.Millisecond
	DefaultPollInterval = 2 * time.Second

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

// HTTPServer returns an *http.Server that serves h with the timeouts of c,
// so that a client that stops reading or sending cannot hold a connection
// open for long.
func (c Config) HTTPServer(h http.Handler) *http.Server {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(c.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       pick(c.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      pick(c.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       pick(c.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    64 << 10,
	}
}

// Server serves an exported public tree as a CDN would: it negotiates the
// precompressed sibling by Accept-Encoding, sets the headers of package
// site, answers conditional, HEAD and range requests, and never serves a
// hidden file, a compressed sibling by its own name, a symbolic link or a
// path outside the root.
//
// Documents are served from an immutable in-memory snapshot that is rebuilt
// when the tree changes, so serving them makes no file system call.
type Server struct {
	loader  loader
	logger  *slog.Logger
	osRoot  *os.Root // non-nil when the tree is on the OS file system
	current atomic.Pointer[snapshot]

	reloadMu sync.Mutex // one reload at a time
	watcher  *watcher
	stopPoll chan struct{} // non-nil when polling instead of watching
	polling  sync.WaitGroup
	closed   atomic.Bool
}

// New indexes the tree at root of fsys and returns a Server for it. It
// returns an error when root cannot be read. Unless cfg.NoWatch, a tree on
// the operating system's file system is watched and reloaded on change;
// Close stops that.
func New(fsys afero.Fs, root string, cfg Config) (*Server, error) {
	if fsys == nil {
		return nil, errors.New("serve: no file system")
	}
	if len(site.Encodings) != numEncodings {
		return nil, fmt.Errorf("serve: built for %d encodings, site lists %d", numEncodings, len(site.Encodings))
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		loader: loader{fsys: fsys, root: filepath.Clean(root), memoryLimit: cfg.MemoryLimit, logger: logger},
		logger: logger,
	}
	dir, onOS := osRoot(fsys, s.loader.root)
	if onOS {
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("serve: open %s: %w", dir, err)
		}
		s.osRoot = r
	}
	if err := s.Reload(); err != nil {
		s.closeRoot()
		return nil, err
	}
	if onOS && !cfg.NoWatch {
		w, err := startWatcher(dir, cfg.Debounce, s.reloadLogged, logger)
		if err != nil {
			// Too many folders for inotify, say: poll instead.
			logger.Warn("serve: cannot watch the tree; polling it instead", "dir", dir, "every", cfg.PollInterval, "err", err)
			s.stopPoll = make(chan struct{})
			s.polling.Add(1)
			go s.poll(cfg.PollInterval)
		} else {
			s.watcher = w
		}
	}
	return s, nil
}

// Reload rebuilds the in-memory snapshot from the tree now, reading only
// files whose size or modification time changed. Requests keep being served
// from the previous snapshot until the new one is complete. It returns an
// error, and keeps the previous snapshot, when the tree cannot be read.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	start := time.Now()
	snap, err := s.loader.load(s.current.Load())
	if err != nil {
		return err
	}
	s.current.Store(snap)
	s.logger.Debug("serve: tree loaded", "files", snap.files, "memoryBytes", snap.memory, "took", time.Since(start))
	return nil
}

// reloadLogged is the watcher's reload: errors are logged.
func (s *Server) reloadLogged() {
	if s.closed.Load() {
		return
	}
	if err := s.Reload(); err != nil {
		s.logger.Error("serve: reload", "err", err)
	}
}

// poll reloads the tree every interval until Close.
func (s *Server) poll(interval time.Duration) {
	defer s.polling.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopPoll:
			return
		case <-t.C:
			s.reloadLogged()
		}
	}
}

// Close stops watching (or polling) the tree and releases the root folder.
// It returns the watcher's error, if any. Afterwards the Server still
// answers from its last snapshot what it holds in memory; media that
// stream from disk get 404.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	var err error
	if s.watcher != nil {
		err = s.watcher.close()
	}
	if s.stopPoll != nil {
		close(s.stopPoll)
		s.polling.Wait()
	}
	s.closeRoot()
	return err
}

func (s *Server) closeRoot() {
	if s.osRoot != nil {
		s.osRoot.Close()
	}
}

// Files returns how many files (documents, siblings and media) the current
// snapshot indexes.
func (s *Server) Files() int { return s.current.Load().files }

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
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h["Allow"] = hdrAllow
		writeError(w, r, http.StatusMethodNotAllowed, bodyNotAllowed)
		return
	}
	name, ok := cleanRequestPath(r.URL.EscapedPath())
	if !ok {
		writeError(w, r, http.StatusNotFound, bodyNotFound)
		return
	}
	entries := s.current.Load().entries
	e := entries[name]
	if e == nil {
		// /<id>, /u/<id> and /embed/<id> are a view's pages.
		if stored, ok := site.PageOf("/" + name); ok {
			e = entries[stored]
		}
	}
	if e == nil && name == "robots.txt" {
		serveRobots(w, r)
		return
	}
	if e == nil {
		writeError(w, r, http.StatusNotFound, bodyNotFound)
		return
	}
	for k, v := range e.pageHeaders {
		h[k] = v
	}
	if e.document {
		h["Vary"] = hdrVary
	}
	acc := parseAcceptEncoding(r.Header["Accept-Encoding"])
	idx, ok := acc.choose(&e.available)
	if !ok {
		writeError(w, r, http.StatusNotAcceptable, bodyNotAcceptable)
		return
	}
	rep := &e.identity
	if idx >= 0 {
		rep = e.encoded[idx]
	}
	h["Cache-Control"] = e.cacheControl
	h["Etag"] = rep.etag
	if rep.data != nil {
		respond(w, r, rep, e.contentType, nil)
		return
	}
	s.serveFromDisk(w, r, e, rep)
}

// serveFromDisk streams a large media file. A file that changed or vanished
// since the snapshot was taken triggers a reload and is answered from the
// new snapshot, so the ETag always matches the bytes.
func (s *Server) serveFromDisk(w http.ResponseWriter, r *http.Request, e *entry, rep *representation) {
	f, err := s.openFile(e.name)
	if err == nil {
		defer f.Close()
		var info os.FileInfo
		info, err = f.Stat()
		if err == nil && (!rep.source.same(fileStamp{info.Size(), info.ModTime(), inode(info)}) || !info.Mode().IsRegular()) {
			err = errChanged
		}
	}
	if err != nil {
		if r.Context().Value(retriedKey{}) == nil {
			if rerr := s.Reload(); rerr == nil {
				for k := range w.Header() {
					delete(w.Header(), k)
				}
				s.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), retriedKey{}, true)))
				return
			}
		}
		s.logger.Error("serve: open media", "path", e.name, "err", err)
		writeError(w, r, http.StatusNotFound, bodyNotFound)
		return
	}
	if err := respond(w, r, rep, e.contentType, f); err != nil {
		s.logger.Debug("serve: write media", "path", e.name, "err", err)
	}
}

// retriedKey marks a request already answered again after a reload.
type retriedKey struct{}

var errChanged = errors.New("file changed since the tree was loaded")

// file is what serveFromDisk needs of an open file.
type file interface {
	io.ReadSeeker
	io.Closer
	Stat() (os.FileInfo, error)
}

// openFile opens the public file name. On the OS file system it goes
// through os.Root, so no symbolic link swapped in after the walk can lead
// outside the root.
func (s *Server) openFile(name string) (file, error) {
	if s.osRoot != nil {
		return s.osRoot.Open(filepath.FromSlash(name))
	}
	return s.loader.fsys.Open(filepath.Join(s.loader.root, filepath.FromSlash(name)))
}

// errorLengths holds the Content-Length values of the error bodies.
var errorLengths = map[int][]string{}

func init() {
	for _, b := range [][]byte{bodyNotFound, bodyNotAllowed, bodyNotAcceptable, bodyPreconditionFailed, bodyRangeNotSatisfiable} {
		errorLengths[len(b)] = []string{strconv.Itoa(len(b))}
	}
}

// writeError writes a JSON error body with status code. The body is not
// cached: the file may appear with the next export.
func writeError(w http.ResponseWriter, r *http.Request, code int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Cache-Control"] = hdrNoStore
	h["Content-Length"] = errorLengths[len(body)]
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
