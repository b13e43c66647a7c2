package site

import (
	"path"
	"strconv"
	"strings"
	"time"
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

// Headers a CDN reads besides Cache-Control, as they are spelled in the
// documentation of the CDNs that read them.
const (
	// SurrogateControl is Fastly's edge-only Cache-Control (the printed
	// Varnish configuration sets its own TTL and ignores it); a CDN that
	// reads it removes it before the browser sees it.
	SurrogateControl = "Surrogate-Control"
	// CDNCacheControl is RFC 9213's edge-only Cache-Control, read by
	// Cloudflare among others.
	CDNCacheControl = "CDN-Cache-Control"
)

// SurrogateKeyHeaders are the response headers that carry a file's
// surrogate key, one per family of CDNs: xkey (Varnish's xkey vmod),
// Surrogate-Key (Fastly) and Cache-Tag (Cloudflare). Each holds the one
// key of SurrogateKeyOf.
var SurrogateKeyHeaders = []string{"xkey", "Surrogate-Key", "Cache-Tag"}

// Object metadata that carries the surrogate key and the edge TTL where a
// store cannot set arbitrary response headers: S3 serves them as
// x-amz-meta-surrogate-key and x-amz-meta-surrogate-control, which a CDN
// in front copies into its own headers (docs/hosting.md).
const (
	SurrogateKeyMetadata     = "surrogate-key"
	SurrogateControlMetadata = "surrogate-control"
)

// Header is one response header field.
type Header struct{ Name, Value string }

// EdgeMaxAge returns the max-age directive ("max-age=N", whole seconds)
// that shared caches keep the public file p for, given the edge TTL
// edgeTTL, and "" when they follow Cache-Control: edgeTTL is below one
// second, or p belongs to no public id (the stylesheet, cached for a year
// anyway). An edge TTL longer than Cache-Control's max-age is only safe
// with purges by SurrogateKey: a hidden view must not stay at the edge.
func EdgeMaxAge(p string, edgeTTL time.Duration) string {
	if edgeTTL < time.Second {
		return ""
	}
	if _, ok := SurrogateKeyOf(p); !ok {
		return ""
	}
	return "max-age=" + strconv.FormatInt(int64(edgeTTL/time.Second), 10)
}

// EdgeCacheControl returns the Cache-Control value of the public file p
// behind a CDN that keeps it edgeTTL: CacheControl(p) with s-maxage=N
// (read by CloudFront and other shared caches, ignored by browsers) when
// EdgeMaxAge gives one, CacheControl(p) otherwise. The browser's max-age
// is the same either way.
func EdgeCacheControl(p string, edgeTTL time.Duration) string {
	cc := CacheControl(p)
	if m := EdgeMaxAge(p, edgeTTL); m != "" {
		cc += ", s-" + strings.Replace(m, "max-age", "maxage", 1)
	}
	return cc
}

// FileHeaders returns the caching headers of the public file p (its path
// in the tree: a page is its index.html) served with the edge TTL edgeTTL, in this order:
// Cache-Control (EdgeCacheControl); Surrogate-Control and
// CDN-Cache-Control when EdgeMaxAge gives a max-age; and each of
// SurrogateKeyHeaders when p has a surrogate key. A server sends them
// all; a store that cannot, sets ObjectMetadata.
func FileHeaders(p string, edgeTTL time.Duration) []Header {
	hs := []Header{{"Cache-Control", EdgeCacheControl(p, edgeTTL)}}
	if m := EdgeMaxAge(p, edgeTTL); m != "" {
		hs = append(hs, Header{SurrogateControl, m}, Header{CDNCacheControl, m})
	}
	if k, ok := SurrogateKeyOf(p); ok {
		for _, n := range SurrogateKeyHeaders {
			hs = append(hs, Header{n, k})
		}
	}
	return hs
}

// ObjectMetadata returns the metadata that carries the headers of
// FileHeaders that a bucket object cannot have as its own: the surrogate
// key (SurrogateKeyMetadata) and, with an edge TTL, Surrogate-Control's
// value (SurrogateControlMetadata). Cache-Control is an object attribute
// (EdgeCacheControl). It returns an empty map for a file with no key.
func ObjectMetadata(p string, edgeTTL time.Duration) map[string]string {
	md := map[string]string{}
	if k, ok := SurrogateKeyOf(p); ok {
		md[SurrogateKeyMetadata] = k
	}
	if m := EdgeMaxAge(p, edgeTTL); m != "" {
		md[SurrogateControlMetadata] = m
	}
	return md
}
