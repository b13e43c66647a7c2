package sidecar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/guidepub/guidepub/site"
	"github.com/spf13/afero"
)

// PrivateCacheControl is the Cache-Control of private documents: no shared
// cache may keep them, and the browser should not store them either.
const PrivateCacheControl = "private, no-store"

// handlePrivate serves GET and HEAD /private/{guideId}/{path...}
// ?accessToken=...: the file site.PrivateDocPath(guideId, path) with
// Range, a strong ETag and conditional requests. A missing, invalid,
// expired or other guide's token is 401; a name that is not a plain
// relative path inside the guide's documents, a symlink or a missing file
// is 404.
func (s *Server) handlePrivate(w http.ResponseWriter, r *http.Request) {
	guideID := r.PathValue("guideId")
	if err := s.events.VerifyToken(r.URL.Query().Get("accessToken"), guideID); err != nil {
		s.logger.Debug("private document refused", "guideId", truncate(guideID, 80), "reason", err)
		s.writeError(w, r, errUnauthenticated)
		return
	}
	rel := r.PathValue("path")
	if !safeRel(rel) {
		s.writeError(w, r, notFound("no such document"))
		return
	}
	name := site.PrivateDocPath(guideID, rel)
	f, fi, err := s.openRegular(name)
	if errors.Is(err, fs.ErrNotExist) {
		s.writeError(w, r, notFound("no such document"))
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	etag, err := s.etags.get(name, fi, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", site.ContentType(rel))
	h.Set("Cache-Control", PrivateCacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

// safeRel reports whether rel is a plain relative slash path: no empty,
// "." or ".." element, no dot-file, no backslash or control character.
func safeRel(rel string) bool {
	if rel == "" || len(rel) > 1024 {
		return false
	}
	for _, el := range strings.Split(rel, "/") {
		if el == "" || strings.HasPrefix(el, ".") {
			return false
		}
		for i := 0; i < len(el); i++ {
			if c := el[i]; c < 0x20 || c == 0x7f || c == '\\' || c == ':' {
				return false
			}
		}
	}
	return true
}

// openRegular opens name in the private tree if every element of it is a
// real folder or, for the last, a regular file: symlinks are refused, so
// nothing outside the tree is served. Refusals are fs.ErrNotExist.
func (s *Server) openRegular(name string) (afero.File, fs.FileInfo, error) {
	lst, canLstat := s.root.(afero.Lstater)
	els := strings.Split(name, "/")
	var fi fs.FileInfo
	for i := range els {
		p := path.Join(els[:i+1]...)
		var err error
		if canLstat {
			fi, _, err = lst.LstatIfPossible(p)
		} else {
			fi, err = s.root.Stat(p)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, fs.ErrNotExist
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stat %s: %w", p, err)
		}
		last := i == len(els)-1
		if fi.Mode()&fs.ModeSymlink != 0 || (!last && !fi.IsDir()) || (last && !fi.Mode().IsRegular()) {
			return nil, nil, fs.ErrNotExist
		}
	}
	f, err := s.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	fi, err = f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, fi, nil
}

// etagCache remembers the content hash of private documents by name, size
// and modification time, so large files are hashed once per version.
type etagCache struct {
	mu      sync.Mutex
	entries map[string]etagEntry
}

type etagEntry struct {
	size    int64
	modTime time.Time
	etag    string
}

const maxCachedETags = 10000

func newETagCache() *etagCache { return &etagCache{entries: make(map[string]etagEntry)} }

// get returns the strong ETag of f (its name, size and mtime as in fi),
// hashing the content when it is not cached; f is left at offset 0.
func (c *etagCache) get(name string, fi fs.FileInfo, f afero.File) (string, error) {
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && e.size == fi.Size() && e.modTime.Equal(fi.ModTime()) {
		return e.etag, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", name, err)
	}
	etag := `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
	c.mu.Lock()
	if len(c.entries) >= maxCachedETags {
		clear(c.entries)
	}
	c.entries[name] = etagEntry{size: fi.Size(), modTime: fi.ModTime(), etag: etag}
	c.mu.Unlock()
	return etag, nil
}
