package site

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Public tree layout, relative to the exported root (see
// docs/documents.md#the-public-tree). A view's documents sit under its id, and again under the guide's
// alias for the default view:
//
//	<viewId>/data/status     View status
//	<viewId>/data/summary    Measurement summary (absent when hidden)
//	<viewId>/reso/autofill   Autofill (absent when hidden or not ready)
//	<viewId>/doc/...         Public media files of the view
//
// Each document has .br, .zst and .gz siblings holding the same bytes
// compressed. Media files are stored once, uncompressed.
const (
	StatusFile   = "data/status"
	SummaryFile  = "data/summary"
	AutofillFile = "reso/autofill"
	MediaDir     = "doc"
)

// ViewDocument is one kind of document a view publishes under its folder
// (see docs/documents.md#view-documents). Adding a kind is adding a row to
// ViewDocuments, its row to the hide table (PublicFiles) and its renderer
// to the exporter.
type ViewDocument struct {
	// File is the document's path relative to the view folder.
	File string
	// MediaType is the Content-Type it is served with.
	MediaType string
	// Kind is its row of the hide table (PublicFiles), which says which
	// hidden features remove it and whether a view that is not ready
	// publishes it.
	Kind FileKind
}

// ViewDocuments lists the documents of a view, in publishing order.
var ViewDocuments = []ViewDocument{
	{File: StatusFile, MediaType: "application/json", Kind: FileStatus},
	{File: SummaryFile, MediaType: "application/json", Kind: FileSummary},
	{File: AutofillFile, MediaType: "application/json", Kind: FileAutofill},
}

// Documents lists the document files of a view, relative to the view
// folder: the File of each of ViewDocuments.
var Documents = func() []string {
	out := make([]string, len(ViewDocuments))
	for i, d := range ViewDocuments {
		out[i] = d.File
	}
	return out
}()

// viewDocument returns the kind of the document at the slash-separated
// public path p, and false when p is not a view document, a page or the
// stylesheet (the documents stored with compressed siblings).
func viewDocument(p string) (ViewDocument, bool) {
	if _, ok := PageKindOf(p); ok {
		return ViewDocument{File: PageFile, MediaType: PageType}, true
	}
	if IsStylesheet(p) {
		return ViewDocument{File: p, MediaType: StylesheetType, Kind: FileStylesheet}, true
	}
	i := strings.IndexByte(p, '/')
	if i <= 0 {
		return ViewDocument{}, false
	}
	rest := p[i+1:]
	for _, d := range ViewDocuments {
		if d.File == rest {
			return d, true
		}
	}
	return ViewDocument{}, false
}

// ValidID matches guide ids, view ids, aliases and media ids: 1 to 64 ASCII
// letters, digits, '_' or '-'.
var ValidID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Reserved names cannot be used as a view id or alias: their top-level paths
// belong to the sidecar or to the static server.
var Reserved = map[string]bool{
	"api": true, "private": true, "healthz": true, "readyz": true, "metrics": true,
	"oauth": true, UnbrandedDir: true, EmbedDir: true,
}

// View pages (docs/pages.md): every view and alias id has a branded, an
// unbranded and an embedded HTML page, stored as index files of their own
// folders (on disk a name cannot be a folder and a file at once, and
// <id>/ already holds the view's documents) and served at /<id>,
// /u/<id> and /embed/<id>. These are in the guide's default language; a
// page in another language of Languages is stored one folder deeper and
// served at /<id>/<lang>, /u/<id>/<lang> and /embed/<id>/<lang>
// (docs/pages.md#languages). A language code is never a view document's
// first path element (data, reso, doc), so <id>/<lang>/ cannot meet the
// view's documents, and as index files no page key is both an object and
// a prefix of another.
const (
	PageFile     = "index.html"
	UnbrandedDir = "u"
	EmbedDir     = "embed"
	PageType     = "text/html; charset=utf-8"
)

// Page kinds, in the order of PagePaths.
const (
	PageBranded = iota
	PageUnbranded
	PageEmbedded
)

// PagePaths returns the public paths of id's branded, unbranded and
// embedded pages in the default language.
func PagePaths(id string) [3]string {
	return [3]string{id + "/" + PageFile, UnbrandedDir + "/" + id + "/" + PageFile, EmbedDir + "/" + id + "/" + PageFile}
}

// LanguagePagePaths returns the public paths of id's branded, unbranded
// and embedded pages in language lang (one of Languages), when lang is not
// the guide's default language.
func LanguagePagePaths(id, lang string) [3]string {
	return [3]string{id + "/" + lang + "/" + PageFile, UnbrandedDir + "/" + id + "/" + lang + "/" + PageFile, EmbedDir + "/" + id + "/" + lang + "/" + PageFile}
}

// PublicIDOf returns the public id (view id or alias) the public path p
// (slash-separated) belongs to: its first element, or its second under
// the page folders (UnbrandedDir, EmbedDir), up to the first dot (ids have
// none; a compressed sibling's suffix follows one).
func PublicIDOf(p string) string {
	first, rest, _ := strings.Cut(p, "/")
	if (first == UnbrandedDir || first == EmbedDir) && rest != "" {
		first, _, _ = strings.Cut(rest, "/")
	}
	id, _, _ := strings.Cut(first, ".")
	return id
}

// PageKindOf returns the kind of the page stored at p (in any language),
// and false when p is not a page.
func PageKindOf(p string) (int, bool) {
	dir, ok := strings.CutSuffix(p, "/"+PageFile)
	if !ok {
		return 0, false
	}
	parts := strings.Split(dir, "/")
	if n := len(parts); n > 1 && slices.Contains(Languages, parts[n-1]) {
		// A language page when the rest is a default-language page's
		// folder; "u/fr" is the unbranded page of the view "fr".
		if k, ok := pageKindOfDir(parts[:n-1]); ok {
			return k, true
		}
	}
	return pageKindOfDir(parts)
}

// pageKindOfDir returns the kind of the default-language page stored in
// the folder parts.
func pageKindOfDir(parts []string) (int, bool) {
	switch {
	case len(parts) == 1 && ValidID.MatchString(parts[0]) && !Reserved[parts[0]]:
		return PageBranded, true
	case len(parts) == 2 && parts[0] == UnbrandedDir && ValidID.MatchString(parts[1]):
		return PageUnbranded, true
	case len(parts) == 2 && parts[0] == EmbedDir && ValidID.MatchString(parts[1]):
		return PageEmbedded, true
	}
	return 0, false
}

// PageOf returns where the page a request path asks for is stored: "/x",
// "/u/x" and "/embed/x" name the pages of id x, "/x/fr", "/u/x/fr" and
// "/embed/x/fr" its pages in French. ok is false for any other path.
func PageOf(urlPath string) (string, bool) {
	p := strings.TrimPrefix(urlPath, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		return "", false
	}
	stored := p + "/" + PageFile
	_, ok := PageKindOf(stored)
	return stored, ok
}

// PrivatePrefix is the URL path prefix under which the sidecar serves private
// documents: {view_url}/private/<guideId>/<file>?accessToken=... .
const PrivatePrefix = "/private/"

// ViewFile returns the public path of file (one of Documents, or
// "doc/...") for the view or alias id.
func ViewFile(viewID, file string) string { return viewID + "/" + file }

// MediaFile returns the public path of a view's media file rel (relative to
// the view's doc folder, slash-separated).
func MediaFile(viewID, rel string) string { return viewID + "/" + MediaDir + "/" + rel }

// IsDocument reports whether the slash-separated public path p names a
// document: a JSON document, a view page or the stylesheet, each stored
// with compressed siblings (as opposed to a media file or a compressed
// sibling).
func IsDocument(p string) bool {
	_, ok := viewDocument(p)
	return ok
}

// IsHidden reports whether the slash-separated path p has an element that
// starts with a dot. Temporary files and the exporter's bookkeeping are
// hidden; servers and uploaders skip them.
func IsHidden(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if strings.HasPrefix(el, ".") {
			return true
		}
	}
	return false
}

// TempPrefix starts the name of every temporary file the exporter writes
// before renaming it into place. It is a dot-file, so IsHidden covers it.
const TempPrefix = ".tmp-"

// Private tree layout, relative to --private. None of it is ever published.
//
//	exported/<guideId>.json            The exporter's record of what it published for the guide
//	guides/<guideId>/record.json       GuideRecord: owner, work order, webhooks, revision
//	guides/<guideId>/event.json        ReadyEvent without authtoken (default view ready)
//	guides/<guideId>/doc/<file>        Private documents, served at PrivatePrefix<guideId>/<file>
//	outbox/                            Live publishing's changes not yet in the bucket
//	purges/                            Purges owed to the CDN in front (--purge)
const (
	OutboxDir    = "outbox"
	PurgesDir    = "purges"
	ManifestFile = "manifest.json"
	GuidesDir    = "guides"
	RecordFile   = "record.json"
	EventFile    = "event.json"
)

// SidecarRoutes are the public paths a web server in front must send to the
// sidecar: the Portal API, private documents and the OAuth authorization
// server (docs/deployment.md#routing-the-sidecar). A route ending in "/" is
// a prefix; the others are exact paths.
var SidecarRoutes = []string{"/api/", PrivatePrefix, "/oauth/", "/.well-known/oauth-authorization-server"}

// GuideDir returns the private folder of a guide.
func GuideDir(guideID string) string { return path.Join(GuidesDir, guideID) }

// RecordPath returns the private path of a guide's GuideRecord.
func RecordPath(guideID string) string { return path.Join(GuidesDir, guideID, RecordFile) }

// EventPath returns the private path of a guide's ready event.
func EventPath(guideID string) string { return path.Join(GuidesDir, guideID, EventFile) }

// PrivateDocPath returns the private path of the document rel of a guide.
func PrivateDocPath(guideID, rel string) string {
	return path.Join(GuidesDir, guideID, MediaDir, rel)
}

// PrivateURL returns the URL the sidecar serves a private document at,
// below viewURL (no trailing slash).
func PrivateURL(viewURL, guideID, rel string) string {
	return strings.TrimRight(viewURL, "/") + PrivatePrefix + guideID + "/" + rel
}

// RenditionFile returns the name of the rendition width pixels wide of the
// published image rel (relative to a view's doc folder): rel without its
// extension, then ".w<width>.jpg" ("photos/ph-1.jpg" at 480:
// "photos/ph-1.w480.jpg"). Published image names have one dot, before
// their extension, so a rendition's name is no other file's (see
// docs/output.md#images).
func RenditionFile(rel string, width int) string {
	return strings.TrimSuffix(rel, path.Ext(rel)) + ".w" + strconv.Itoa(width) + ".jpg"
}
