package site

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The hide table: every kind of file the public tree may hold, where it
// goes and which hidden features remove it (see
// docs/output.md#the-hide-table). It is the one rule: the exporter asks it
// what a view publishes and refuses to write a public file it cannot
// place, the view pages ask it what they may link, and publishing asks it
// what a file is. A kind without a row is never public.

// FileKind names a row of the hide table.
type FileKind string

// The kinds of public file. A public document kind of DocumentKinds that
// is one file per language is the kind of its key; the floor pages of
// every FloorPages document kind are FileFloorPage.
const (
	FileStatus             FileKind = "status"
	FileSummary            FileKind = "summary"
	FileAutofill           FileKind = "autofill"
	FileBrandedPage        FileKind = "brandedPage"
	FileUnbrandedPage      FileKind = "unbrandedPage"
	FileEmbeddedPage       FileKind = "embeddedPage"
	FilePhoto              FileKind = "photo"
	FilePhotoSmall         FileKind = "photoSmall"
	FilePhotoRendition     FileKind = "photoRendition"
	FileGalleryFrontImage  FileKind = "galleryFrontImage"
	FilePDFMetric          FileKind = "pdfMetric"
	FilePDFImperial        FileKind = "pdfImperial"
	FileEmbedImage         FileKind = "embedImage"
	FileFloorPage          FileKind = "floorPage"
	FileFloorPageRendition FileKind = "floorPageRendition"
	FileBannerImage        FileKind = "bannerImage"
	FileBannerRendition    FileKind = "bannerImageRendition"
	FileStylesheet         FileKind = "stylesheet"
)

// What a public file is, for those that handle them by group (publishing
// uploads media first, statuses last).
const (
	GroupDocument = "document" // a view document (Documents), with compressed siblings
	GroupPage     = "page"     // a view page, with compressed siblings
	GroupMedia    = "media"    // a media file under a view's doc folder, stored once
	GroupShared   = "shared"   // a file of the whole tree, no view's (the stylesheet), with compressed siblings
)

// PublicFile is one row of the hide table: a kind of public file.
type PublicFile struct {
	Kind FileKind
	// Group is GroupDocument, GroupPage, GroupMedia or GroupShared.
	Group string
	// Path is where the files of the kind go, relative to the public
	// tree, as docs/output.md writes it.
	Path string
	// HiddenBy lists the hidden features each of which removes every file
	// of the kind from a ready view.
	HiddenBy []string
	// Always is set on a kind that no hidden feature removes. A row must
	// have HiddenBy or Always, never both and never neither, so that no
	// kind is public by omission (CheckPublicFiles).
	Always bool
	// NotReady is set on the kinds a view that is not ready publishes too
	// (whatever it hides: they then say only its status). The others are
	// published by ready views only.
	NotReady bool
	// Alias is set on the kinds published under the guide's alias too,
	// for its default view; the others only under the view's own id.
	Alias bool
	// Renditions is the kind of the resized copies of a file of this
	// kind, "" when it has none: an image of a kind without renditions
	// gets none.
	Renditions FileKind
}

// PublicFiles is the hide table, in the order docs/output.md lists it.
// Adding a public file kind is adding a row here (and its path to
// PublicFileOf); until then the exporter refuses to write such a file.
var PublicFiles = []PublicFile{
	{Kind: FileStatus, Group: GroupDocument, Path: "<id>/data/status", Always: true, NotReady: true, Alias: true},
	{Kind: FileSummary, Group: GroupDocument, Path: "<id>/data/summary", HiddenBy: []string{HideMeasurements}, NotReady: true, Alias: true},
	{Kind: FileAutofill, Group: GroupDocument, Path: "<id>/reso/autofill", HiddenBy: []string{HideAutofill}, Alias: true},
	{Kind: FileBrandedPage, Group: GroupPage, Path: "<id>/index.html, <id>/<lang>/index.html", Always: true, NotReady: true, Alias: true},
	{Kind: FileUnbrandedPage, Group: GroupPage, Path: "u/<id>/index.html, u/<id>/<lang>/index.html", Always: true, NotReady: true, Alias: true},
	{Kind: FileEmbeddedPage, Group: GroupPage, Path: "embed/<id>/index.html, embed/<id>/<lang>/index.html", Always: true, NotReady: true, Alias: true},
	{Kind: FilePhoto, Group: GroupMedia, Path: "<viewId>/doc/photos/<photoId><ext>", HiddenBy: []string{HidePhotos}, Renditions: FilePhotoRendition},
	{Kind: FilePhotoSmall, Group: GroupMedia, Path: "<viewId>/doc/photos/<photoId>-small<ext>", HiddenBy: []string{HidePhotos}},
	{Kind: FilePhotoRendition, Group: GroupMedia, Path: "<viewId>/doc/photos/<photoId>.w<width>.jpg", HiddenBy: []string{HidePhotos}},
	{Kind: FileGalleryFrontImage, Group: GroupMedia, Path: "<viewId>/doc/<lang>/galleryFrontImage<ext>", HiddenBy: []string{HidePhotos}},
	{Kind: FilePDFMetric, Group: GroupMedia, Path: "<viewId>/doc/<lang>/pdfMetric<ext>", HiddenBy: []string{HideFloorPlans}},
	{Kind: FilePDFImperial, Group: GroupMedia, Path: "<viewId>/doc/<lang>/pdfImperial<ext>", HiddenBy: []string{HideFloorPlans}},
	{Kind: FileEmbedImage, Group: GroupMedia, Path: "<viewId>/doc/<lang>/embedImage<ext>", HiddenBy: []string{HideFloorPlans}},
	{Kind: FileFloorPage, Group: GroupMedia, Path: "<viewId>/doc/<lang>/<jpgMetric|jpgImperial>-<floorId><ext>", HiddenBy: []string{HideFloorPlans, HideAutofill}, Renditions: FileFloorPageRendition},
	{Kind: FileFloorPageRendition, Group: GroupMedia, Path: "<viewId>/doc/<lang>/<jpgMetric|jpgImperial>-<floorId>.w<width>.jpg", HiddenBy: []string{HideFloorPlans, HideAutofill}},
	{Kind: FileBannerImage, Group: GroupMedia, Path: "<viewId>/doc/banner<ext>", Always: true, Renditions: FileBannerRendition},
	{Kind: FileBannerRendition, Group: GroupMedia, Path: "<viewId>/doc/banner.w<width>.jpg", Always: true},
	// The pages' style rules, the same for every view of every guide: no
	// text, figure or file of any bundle, so nothing a view hides.
	{Kind: FileStylesheet, Group: GroupShared, Path: AssetsDir + "/view.<hash>.css", Always: true, NotReady: true},
}

// HiddenFeatures lists every hidden feature a view may list, in the order
// of the bundle's documentation.
var HiddenFeatures = []string{
	HideMeasurements, HideRoomDimensions, HideAddress, HideFloorPlans,
	HidePhotos, HideVideo, HideAutofill,
}

// PublicFileByKind returns the row of kind k, and false when the table
// has none.
func PublicFileByKind(k FileKind) (PublicFile, bool) {
	for _, f := range PublicFiles {
		if f.Kind == k {
			return f, true
		}
	}
	return PublicFile{}, false
}

// HiddenIn reports whether a view hiding hidden removes the files of f.
func (f PublicFile) HiddenIn(hidden []string) bool {
	for _, h := range f.HiddenBy {
		if slices.Contains(hidden, h) {
			return true
		}
	}
	return false
}

// Shows reports whether a ready view hiding hidden publishes files of
// kind k. A kind without a valid row is never shown.
func Shows(k FileKind, hidden []string) bool {
	f, ok := PublicFileByKind(k)
	return ok && f.check() == nil && !f.HiddenIn(hidden)
}

// Publishes reports whether a view hiding hidden publishes files of kind
// k under id: its own view id, or (alias) the guide's alias. A view that
// is not ready (ready false) publishes only the NotReady kinds, whatever
// it hides.
func Publishes(k FileKind, hidden []string, ready, alias bool) bool {
	f, ok := PublicFileByKind(k)
	switch {
	case !ok || f.check() != nil || alias && !f.Alias:
		return false
	case !ready:
		return f.NotReady
	}
	return !f.HiddenIn(hidden)
}

// DocumentFile returns the kind of the public copies of the document kind
// key: FileFloorPage for a FloorPages kind, the key itself for another
// public kind, and "" for a private kind (never published) or an unknown
// key.
func DocumentFile(key string) FileKind {
	k, ok := DocumentKindByKey(key)
	switch {
	case !ok:
		return ""
	case k.FloorPages:
		return FileFloorPage
	case k.Public:
		return FileKind(k.Key)
	}
	return ""
}

// IsPlanKind reports whether the document kind key is a floor plan: one
// whose public files hiding floorPlans removes (the PDFs, the floor pages,
// the embed image). A view's own plans replace exactly these kinds of the
// guide's documents (docs/bundle.md#per-view-plans).
func IsPlanKind(key string) bool {
	f, ok := PublicFileByKind(DocumentFile(key))
	return ok && slices.Contains(f.HiddenBy, HideFloorPlans)
}

// check returns why f is not a valid row, or nil.
func (f PublicFile) check() error {
	switch {
	case f.Kind == "":
		return fmt.Errorf("a row has no kind")
	case f.Group != GroupDocument && f.Group != GroupPage && f.Group != GroupMedia && f.Group != GroupShared:
		return fmt.Errorf("%s: unknown group %q", f.Kind, f.Group)
	case f.Always == (len(f.HiddenBy) > 0):
		return fmt.Errorf("%s: must list the hidden features that remove it (HiddenBy) or say that none does (Always), and not both", f.Kind)
	}
	for _, h := range f.HiddenBy {
		if !slices.Contains(HiddenFeatures, h) {
			return fmt.Errorf("%s: unknown hidden feature %q", f.Kind, h)
		}
	}
	return nil
}

// CheckPublicFiles returns why table is not a valid hide table, or nil:
// a row without a kind, a group or a decision on hidden features, a kind
// listed twice, or a rendition kind that has no row.
func CheckPublicFiles(table []PublicFile) error {
	seen := map[FileKind]bool{}
	for _, f := range table {
		if err := f.check(); err != nil {
			return err
		}
		if seen[f.Kind] {
			return fmt.Errorf("%s: listed twice", f.Kind)
		}
		seen[f.Kind] = true
	}
	for _, f := range table {
		if f.Renditions != "" && !seen[f.Renditions] {
			return fmt.Errorf("%s: its renditions' kind %s has no row", f.Kind, f.Renditions)
		}
	}
	return nil
}

// PublicFileOf returns the row of the public file at the slash-separated
// path p (relative to the public tree) and the view id or alias it belongs
// to ("" for a GroupShared file, which is no view's); ok is false when p is no file of any row, which guidepub never
// publishes. Compressed siblings are not files of their own: pass the
// document's path.
func PublicFileOf(p string) (f PublicFile, id string, ok bool) {
	kind, id := publicKindOf(p)
	if kind == "" {
		return PublicFile{}, "", false
	}
	f, ok = PublicFileByKind(kind)
	return f, id, ok
}

// pageKinds maps the page kinds of PagePaths to their rows.
var pageKinds = map[int]FileKind{PageBranded: FileBrandedPage, PageUnbranded: FileUnbrandedPage, PageEmbedded: FileEmbeddedPage}

// publicKindOf returns the kind of the public file p and the id it belongs
// to, or "" when p is none.
func publicKindOf(p string) (FileKind, string) {
	if IsStylesheet(p) {
		return FileStylesheet, ""
	}
	if k, ok := PageKindOf(p); ok {
		parts := strings.Split(p, "/")
		if k != PageBranded {
			return pageKinds[k], parts[1]
		}
		return pageKinds[k], parts[0]
	}
	id, rest, ok := strings.Cut(p, "/")
	if !ok || !ValidID.MatchString(id) || Reserved[id] {
		return "", ""
	}
	for _, d := range ViewDocuments {
		if d.File == rest {
			return d.Kind, id
		}
	}
	rel, ok := strings.CutPrefix(rest, MediaDir+"/")
	if !ok {
		return "", ""
	}
	return mediaKindOf(rel), id
}

// mediaKindOf returns the kind of the media file rel (relative to a
// view's doc folder), or "" when it is none.
func mediaKindOf(rel string) FileKind {
	dir, name, ok := strings.Cut(rel, "/")
	if !ok {
		dir, name = "", rel // a file of the doc folder itself: the banner image
	}
	if strings.Contains(name, "/") {
		return ""
	}
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	rendition := false
	if b, w, ok := strings.Cut(base, ".w"); ok && ext == ".jpg" {
		if n, err := strconv.Atoi(w); err != nil || n <= 0 || strconv.Itoa(n) != w {
			return ""
		}
		base, rendition = b, true
	}
	if !ValidID.MatchString(base) || ext != "" && !validExt(ext) {
		return ""
	}
	var kind FileKind
	switch {
	case dir == "photos" && !rendition && strings.HasSuffix(base, "-small"):
		// The small copy of photo x, or photo x-small itself: both rows
		// are hidden alike.
		kind = FilePhotoSmall
	case dir == "photos":
		kind = FilePhoto
	case slices.Contains(Languages, dir):
		kind = languageFileKind(base)
	case dir == "" && base == "banner":
		kind = FileBannerImage
	}
	if !rendition || kind == "" {
		return kind
	}
	if f, ok := PublicFileByKind(kind); ok {
		return f.Renditions
	}
	return ""
}

// languageFileKind returns the kind of the file base (without extension)
// of a language folder: a public document kind by its key, a floor page by
// its FloorPages key and floor id.
func languageFileKind(base string) FileKind {
	if k := DocumentFile(base); k != "" && k != FileFloorPage {
		return k
	}
	key, floor, ok := strings.Cut(base, "-")
	if !ok {
		return ""
	}
	if n, err := strconv.Atoi(floor); err != nil || strconv.Itoa(n) != floor {
		return ""
	}
	if DocumentFile(key) == FileFloorPage {
		return FileFloorPage
	}
	return ""
}

// validExt reports whether ext is a published file's extension: a dot
// then lower-case ASCII letters and digits.
func validExt(ext string) bool {
	if len(ext) < 2 {
		return false
	}
	for _, c := range ext[1:] {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
