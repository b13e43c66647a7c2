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
