package sidecar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/guidepub/guidepub/sidecar/privatetree"
	"github.com/guidepub/guidepub/site"
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
	f, info, err := s.root.Open(r.Context(), name)
	if errors.Is(err, fs.ErrNotExist) {
		s.writeError(w, r, notFound("no such document"))
		return
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer f.Close()
	etag, err := s.etags.get(name, info, f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", site.ContentType(rel))
	h.Set("Cache-Control", PrivateCacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", info.ModTime, f)
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

// etagCache remembers the content hash of private documents by name and
// version, so a large file is hashed once per version; a version whose
// hash the tree knows (an object's metadata) is not read at all.
type etagCache struct {
	mu      sync.Mutex
	entries map[string]etagEntry
}

type etagEntry struct {
	version string
	etag    string
}

const maxCachedETags = 10000

func newETagCache() *etagCache { return &etagCache{entries: make(map[string]etagEntry)} }

// get returns the strong ETag of f (the version info of name): the first
// 128 bits of its SHA-256 in hex, hashing the content when neither the
// tree nor the cache knows it; f is left at offset 0.
func (c *etagCache) get(name string, info privatetree.Info, f io.ReadSeeker) (string, error) {
	if len(info.SHA256) == 64 {
		return `"` + info.SHA256[:32] + `"`, nil
	}
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && e.version == info.Version {
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
	c.entries[name] = etagEntry{version: info.Version, etag: etag}
	c.mu.Unlock()
	return etag, nil
}
