package site

import (
	"path"
	"strings"
)

// Cache-Control values. Documents change on every re-export and are
// revalidated after a minute (their strong ETags make that cheap); media
// files keep their name when they change, so they are cached for an hour.
const (
	DocumentCacheControl = "public, max-age=60, stale-while-revalidate=300"
	MediaCacheControl    = "public, max-age=3600"
)

var mediaTypes = map[string]string{
	".pdf":  "application/pdf",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".png":  "image/png",
	".gif":  "image/gif",
	".webp": "image/webp",
	".svg":  "image/svg+xml",
	".zip":  "application/zip",
	".json": "application/json",
	".mp4":  "video/mp4",
	".dxf":  "image/vnd.dxf",
}

// ContentType returns the Content-Type of the public or private file p
// (slash-separated, without a compression suffix): the MediaType of its
// ViewDocuments kind for a document, by extension for media,
// application/octet-stream otherwise.
func ContentType(p string) string {
	if d, ok := viewDocument(p); ok {
		return d.MediaType
	}
	if t, ok := mediaTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	return "application/octet-stream"
}

// CacheControl returns the Cache-Control value for the public file p:
// ImmutableCacheControl for the stylesheet, whose name changes with its
// bytes, DocumentCacheControl for the other documents and the pages,
// MediaCacheControl for media.
func CacheControl(p string) string {
	if IsStylesheet(p) {
		return ImmutableCacheControl
	}
	if IsDocument(p) {
		return DocumentCacheControl
	}
	return MediaCacheControl
}

// SurrogateKeyPrefix starts every surrogate key guidepub sends, so that
// its keys never meet another application's in a CDN service they share.
const SurrogateKeyPrefix = "guidepub-"

// SurrogateKey returns the surrogate key (a CDN's cache tag) of every
// public file of the public id id (a view id or an alias): purging it at
// the edge evicts all that id's documents, pages and media, and the
// answers given for its missing files.
func SurrogateKey(id string) string { return SurrogateKeyPrefix + id }

// SurrogateKeyOf returns the surrogate key of the public file p
// or URL path (slash-separated, compression suffix allowed), and false
// for a file that belongs to no public id (the stylesheet, whose name
// changes with its bytes, the sidecar's routes).
func SurrogateKeyOf(p string) (string, bool) {
	p = strings.TrimPrefix(p, "/")
	id := PublicIDOf(p)
	if first, _, _ := strings.Cut(p, "/"); first == AssetsDir || id == "" || !ValidID.MatchString(id) || Reserved[id] {
		return "", false
	}
	return SurrogateKey(id), true
}
