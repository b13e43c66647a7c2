package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/viewpage"
)

// urls are the public hosts documents link to (see docs/documents.md#base-addresses).
type urls struct {
	View, Unbranded, Embed, Base string
}

// joinURL appends the slash-separated path p to base.
func joinURL(base, p string) string { return strings.TrimRight(base, "/") + "/" + p }

// ViewStatus returns the status of view v of g at now (see docs/documents.md#statuses):
// locked when the view is locked or its expiry has passed, not-ready while
// the guide has no summary, ready otherwise.
func ViewStatus(g *bundle.Guide, v *bundle.View, now time.Time) string {
	switch {
	case v.Locked || (v.ExpiresAt != nil && !now.Before(*v.ExpiresAt)):
		return site.StatusLocked
	case g.Summary == nil:
		return site.StatusNotReady
	}
	return site.StatusReady
}

// marshalJSON encodes v as UTF-8 JSON without HTML escaping, ending with
// exactly one newline. It returns an error only for values JSON cannot
// encode (NaN, infinities).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// autofillLanguage returns the language whose documents the autofill media
// records use: "en" when present, else the first of site.Languages present,
// else the first other key in sorted order, or "" when there are none.
func autofillLanguage(docs map[string]bundle.Documents) string {
	for _, l := range site.Languages {
		if _, ok := docs[l]; ok {
			return l
		}
	}
	keys := sortedKeys(docs)
	if len(keys) > 0 {
		return keys[0]
	}
	return ""
}

// languages returns the keys of docs: site.Languages order first, then any
// other key sorted.
func languages(docs map[string]bundle.Documents) []string {
	var out []string
	for _, l := range site.Languages {
		if _, ok := docs[l]; ok {
			out = append(out, l)
		}
	}
	known := map[string]bool{}
	for _, l := range site.Languages {
		known[l] = true
	}
	for _, k := range sortedKeys(docs) {
		if !known[k] {
			out = append(out, k)
		}
	}
	return out
}

// fileExt returns the lower-case extension of the bundle file rel, or "" if
// it has characters other than ASCII letters and digits (published names
// must be safe in URLs).
func fileExt(rel string) string {
	ext := strings.ToLower(path.Ext(rel))
	if len(ext) < 2 {
		return ""
	}
	for _, c := range ext[1:] {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return ""
		}
	}
	return ext
}

// Published names of media files, relative to a view's doc folder (public)
// or to the guide's private doc folder. They depend only on ids and keys,
// so a re-export with the same bundle gives the same names.

func langDocName(lang, key, src string) string { return lang + "/" + key + fileExt(src) }

func floorPageName(lang, key string, f bundle.FloorImage) string {
	return lang + "/" + key + "-" + strconv.Itoa(f.ID) + fileExt(f.File)
}

func photoName(p bundle.Photo) string { return "photos/" + p.ID + fileExt(p.File) }

func smallPhotoName(p bundle.Photo) string {
	return "photos/" + p.ID + "-small" + fileExt(p.Small.File)
}

// mediaCopy is a bundle file published under another name.
type mediaCopy struct {
	Dst string // relative to the view's (or the guide's private) doc folder
	Src string // relative to the bundle folder
	// Width is a rendition's width (see images.go), 0 for the file itself.
	Width int
}

// viewDocs is what one view publishes: documents by file name
// (site.StatusFile...) and media copies into its doc folder, with the
// built view they were rendered from, which its pages reuse.
type viewDocs struct {
	Docs  map[string][]byte
	Media []mediaCopy
	built builtView
}

// builtView is what the documents and pages of one view are rendered
// from, built once per view.
type builtView struct {
	v      *bundle.View
	status string
	// summary is the view's public summary: nil unless the view is ready
	// and shows its measurements.
	summary *site.Summary
	// autofill is the autofill document of a ready view, built even when
	// the document itself is hidden (the pages take their media from it),
	// and floorPages the JPEG floor pages it links to.
	autofill   site.AutofillDoc
	floorPages []mediaCopy
}

// renderer renders the documents of one guide.
type renderer struct {
	g          *bundle.Guide
	media      map[string]media.Info // the bundle's files, by path
	urls       urls
	sourceName string
	now        time.Time
	// rendered holds the renditions of each view's images by the image's
	// URL, for its pages (see images.go).
	rendered map[string]map[string][]viewpage.Rendition
}

// buildView builds the summary and autofill of view v, when its status
// at r.now calls for them.
func (r *renderer) buildView(v *bundle.View) builtView {
	b := builtView{v: v, status: ViewStatus(r.g, v, r.now)}
	if b.status != site.StatusReady {
		return b
	}
	if !v.Hides(bundle.HideMeasurements) {
		b.summary = publicSummary(r.g.Summary, v.Hides(bundle.HideRoomDimensions))
	}
	b.autofill, b.floorPages = r.autofill(v)
	b.floorPages = sortCopies(append(b.floorPages, r.planPages(v)...))
	return b
}

// renderView returns the documents and media of view v, published under
// the folder id (v.ViewID, or the guide's alias for the default view).
// Documents always link to v.ViewID, so the alias copies are identical. A
// view that is not ready publishes its status and summary, both
// {"status": X}, and no other document or media (see
// docs/documents.md#statuses).
func (r *renderer) renderView(v *bundle.View) (viewDocs, error) {
	out := viewDocs{Docs: map[string][]byte{}, built: r.buildView(v)}
	ready := out.built.status == site.StatusReady
	for _, d := range site.ViewDocuments {
		if !site.Publishes(d.Kind, v.Hidden, ready, false) {
			continue
		}
		render, ok := viewRenderers[d.File]
		if !ok {
			return out, fmt.Errorf("no renderer for view document %s", d.File)
		}
		data, copies, err := render(&out.built)
		if err != nil {
			return out, fmt.Errorf("%s: %w", d.File, err)
		}
		if data != nil {
			out.Docs[d.File] = data
			out.Media = append(out.Media, copies...)
		}
	}
	if !ready {
		return out, nil
	}
	out.Media = append(out.Media, r.publicMedia(v)...)
	out.Media = sortCopies(out.Media)
	return out, nil
}

// viewRenderer renders one view document of the built view b and lists
// the media files it links to; nil data leaves the document out.
type viewRenderer func(b *builtView) (data []byte, copies []mediaCopy, err error)

// viewRenderers renders each of site.ViewDocuments, by file.
var viewRenderers = map[string]viewRenderer{
	site.StatusFile:   renderStatus,
	site.SummaryFile:  renderSummary,
	site.AutofillFile: renderAutofill,
}

func renderStatus(b *builtView) ([]byte, []mediaCopy, error) {
	data, err := marshalJSON(site.StatusDoc{Status: b.status})
	return data, nil, err
}

// renderSummary renders the summary: the status alone for a view that is
// not ready, else with the measurements (room dimensions emptied when the
// view hides them).
func renderSummary(b *builtView) ([]byte, []mediaCopy, error) {
	if b.status != site.StatusReady {
		return renderStatus(b)
	}
	if b.summary == nil {
		return nil, nil, errors.New("no summary: the view hides its measurements")
	}
	data, err := marshalJSON(site.SummaryDoc{Status: b.status, Summary: b.summary})
	return data, nil, err
}

// renderAutofill renders the autofill document of a ready view, with the
// JPEG floor pages it links to; a view that is not ready has none.
func renderAutofill(b *builtView) ([]byte, []mediaCopy, error) {
	if b.status != site.StatusReady {
		return nil, nil, nil
	}
	data, err := marshalJSON(b.autofill)
	return data, b.floorPages, err
}

// publicMedia lists the public media files view v may show, as the hide
// table allows (docs/output.md#the-hide-table): per language the public
// single-file document kinds; every photo, its small copy and its
// renditions; the banner image (banner.go).
func (r *renderer) publicMedia(v *bundle.View) []mediaCopy {
	var out []mediaCopy
	add := func(kind site.FileKind, dst, src string) {
		if src != "" && site.Shows(kind, v.Hidden) {
			out = append(out, mediaCopy{Dst: dst, Src: src})
		}
	}
	docs := r.g.ViewDocuments(v)
	for _, lang := range languages(docs) {
		d := docs[lang]
		for _, k := range site.DocumentKinds {
			if !k.FloorPages {
				add(site.DocumentFile(k.Key), langDocName(lang, k.Key, d.File(k.Key)), d.File(k.Key))
			}
		}
	}
	for _, p := range r.g.Media.Photos {
		add(site.FilePhoto, photoName(p), p.File)
		if p.Small != nil {
			add(site.FilePhotoSmall, smallPhotoName(p), p.Small.File)
		}
		copies, _ := r.renditions(v, site.FilePhoto, photoName(p), p.File)
		out = append(out, copies...)
	}
	return append(out, r.bannerMedia(v)...)
}

// sortCopies sorts media copies by destination and drops duplicate
// destinations (the first source wins), so the list is deterministic
// whatever order produced it.
func sortCopies(m []mediaCopy) []mediaCopy {
	slices.SortStableFunc(m, func(a, b mediaCopy) int { return strings.Compare(a.Dst, b.Dst) })
	return slices.CompactFunc(m, func(a, b mediaCopy) bool { return a.Dst == b.Dst })
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// publicSummary returns a copy of s for a view: arrays are never null, and
// with hideDims every room's dims is empty (see docs/documents.md#hidden-features).
func publicSummary(s *site.Summary, hideDims bool) *site.Summary {
	out := &site.Summary{MeasurementStandard: s.MeasurementStandard, Buildings: make([]site.Building, len(s.Buildings))}
	for i, b := range s.Buildings {
		floors := make([]site.Floor, len(b.Floors))
		for j, f := range b.Floors {
			rooms := make([]site.Room, len(f.Rooms))
			for k, rm := range f.Rooms {
				if hideDims || rm.Dims == nil {
					rm.Dims = []float64{}
				}
				rooms[k] = rm
			}
			f.Rooms = rooms
			floors[j] = f
		}
		b.Floors = floors
		out.Buildings[i] = b
	}
	return out
}

// measurer converts View API measures to a view's autofill units.
type measurer struct {
	off                     bool // measurements hidden: no measure at all
	areaUnits, linearUnits  string
	areaPerUnit, lenPerUnit float64
	source                  string
}

// viewUnits returns the unit system view v of g shows: its own, else
// imperial in the US and metric elsewhere (see docs/documents.md#units).
func viewUnits(g *bundle.Guide, v *bundle.View) string {
	if v.Units != "" {
		return v.Units
	}
	if strings.EqualFold(g.Property.Country, "US") {
		return bundle.UnitsImperial
	}
	return bundle.UnitsMetric
}

func newMeasurer(g *bundle.Guide, v *bundle.View, source string) measurer {
	units := viewUnits(g, v)
	m := measurer{off: v.Hides(bundle.HideMeasurements), source: source}
	if units == bundle.UnitsImperial {
		m.areaUnits, m.linearUnits, m.areaPerUnit, m.lenPerUnit = site.SquareFeet, site.Feet, mm2PerSqFoot, mmPerFoot
	} else {
		m.areaUnits, m.linearUnits, m.areaPerUnit, m.lenPerUnit = site.SquareMeters, site.Meters, mm2PerSqMeter, mmPerMeter
	}
	return m
}

// area converts an area in mm2; it returns nil and empty strings for an
// absent value or when measurements are hidden.
func (m measurer) area(mm2 *float64) (*float64, string, string) {
	if m.off || mm2 == nil {
		return nil, "", ""
	}
	v := round2(*mm2 / m.areaPerUnit)
	return &v, m.areaUnits, m.source
}

// length converts a length in mm like area does.
func (m measurer) length(mm *float64) (*float64, string, string) {
	if m.off || mm == nil {
		return nil, "", ""
	}
	v := round2(*mm / m.lenPerUnit)
	return &v, m.linearUnits, m.source
}

// minus returns total - above, or nil unless both are present.
func minus(total, above *float64) *float64 {
	if total == nil || above == nil {
		return nil
	}
	d := *total - *above
	return &d
}

// structure returns the structure-level measures of building b (see
// docs/documents.md#autofill): above grade straight across; below grade is total minus above
// grade for rms and the BelowGrade fields for ansi.
func (m measurer) structure(standard string, b *site.Building) site.StructureMeasures {
	var s site.StructureMeasures
	switch standard {
	case site.StandardRMS:
		s.AboveGradeInteriorArea, s.AboveGradeInteriorAreaUnits, s.AboveGradeInteriorAreaSource = m.area(b.IntAreaAboveGrade)
		s.BelowGradeInteriorArea, s.BelowGradeInteriorAreaUnits, s.BelowGradeInteriorAreaSource = m.area(minus(b.IntAreaTotal, b.IntAreaAboveGrade))
		s.AboveGradeExteriorArea, s.AboveGradeExteriorAreaUnits, s.AboveGradeExteriorAreaSource = m.area(b.ExtAreaAboveGrade)
		s.BelowGradeExteriorArea, s.BelowGradeExteriorAreaUnits, s.BelowGradeExteriorAreaSource = m.area(minus(b.ExtAreaTotal, b.ExtAreaAboveGrade))
		s.AboveGradeExcludedArea, s.AboveGradeExcludedAreaUnits, s.AboveGradeExcludedAreaSource = m.area(b.ExcludedAreaAboveGrade)
		s.BelowGradeExcludedArea, s.BelowGradeExcludedAreaUnits, s.BelowGradeExcludedAreaSource = m.area(minus(b.ExcludedAreaTotal, b.ExcludedAreaAboveGrade))
	case site.StandardANSI:
		s.AboveGradeFinishedArea, s.AboveGradeFinishedAreaUnits, s.AboveGradeFinishedAreaSource = m.area(b.FinishedAreaAboveGrade)
		s.BelowGradeFinishedArea, s.BelowGradeFinishedAreaUnits, s.BelowGradeFinishedAreaSource = m.area(b.FinishedAreaBelowGrade)
		s.AboveGradeUnfinishedArea, s.AboveGradeUnfinishedAreaUnits, s.AboveGradeUnfinishedAreaSource = m.area(b.UnfinishedAreaAboveGrade)
		s.BelowGradeUnfinishedArea, s.BelowGradeUnfinishedAreaUnits, s.BelowGradeUnfinishedAreaSource = m.area(b.UnfinishedAreaBelowGrade)
	}
	s.PerimeterWallThickness, s.PerimeterWallThicknessUnits, s.PerimeterWallThicknessSource = m.length(b.WallThickness)
	return s
}

// roomLevels are the RoomLevel values of above-grade floors in bundle
// order (see docs/documents.md#room-levels); later floors are "Upper".
var roomLevels = []string{"Main", "Second", "Third"}

// autofill returns the autofill document of view v and the JPEG floor
// pages its media records link to.
func (r *renderer) autofill(v *bundle.View) (site.AutofillDoc, []mediaCopy) {
	g := r.g
	m := newMeasurer(g, v, r.sourceName)
	hideDims := v.Hides(bundle.HideRoomDimensions)
	var a site.Autofill
	if !v.Hides(bundle.HideAddress) {
		p := g.Property
		a.Country, a.StateOrProvince, a.City = p.Country, p.StateProvince, p.City
		a.PostalCode, a.StreetName, a.StreetNumber = p.PostalCode, p.StreetName, p.StreetNumber
		if p.Unit != nil {
			a.UnitNumber = *p.Unit
		}
	}
	a.Rooms = []site.PropertyRoom{}
	a.XSvcStructures = []site.PropertyStructure{}
	standard := g.Summary.MeasurementStandard
	for bi := range g.Summary.Buildings {
		b := &g.Summary.Buildings[bi]
		sk := strconv.Itoa(b.ID)
		ps := site.PropertyStructure{
			StructureKey:      sk,
			StructureName:     b.Name,
			MainStructureYN:   b.IsMainBuilding,
			StructureMeasures: m.structure(standard, b),
			FloorsTotal:       len(b.Floors),
			Floors:            make([]site.PropertyFloor, 0, len(b.Floors)),
		}
		if b.IsMainBuilding {
			a.StructureMeasures = ps.StructureMeasures
		}
		above := 0
		for fi := range b.Floors {
			f := &b.Floors[fi]
			level := "Basement"
			if !f.IsBelowGrade {
				level = "Upper"
				if above < len(roomLevels) {
					level = roomLevels[above]
				}
				above++
			}
			fk := strconv.Itoa(f.ID)
			pf := site.PropertyFloor{FloorKey: fk, StructureKey: sk, FloorName: f.Name, BelowGradeYN: f.IsBelowGrade, RoomsTotal: len(f.Rooms), Rooms: make([]site.PropertyRoom, 0, len(f.Rooms))}
			pf.InteriorArea, pf.InteriorAreaUnits, pf.InteriorAreaSource = m.area(f.InteriorArea)
			pf.ExteriorArea, pf.ExteriorAreaUnits, pf.ExteriorAreaSource = m.area(f.ExteriorArea)
			pf.FinishedArea, pf.FinishedAreaUnits, pf.FinishedAreaSource = m.area(f.FinishedArea)
			pf.PerimeterWallLength, pf.PerimeterWallLengthUnits, pf.PerimeterWallLengthSource = m.length(f.Perimeter)
			pf.PerimeterWallThickness, pf.PerimeterWallThicknessUnits, pf.PerimeterWallThicknessSource = m.length(f.WallThickness)
			for ri := range f.Rooms {
				rm := &f.Rooms[ri]
				pr := site.PropertyRoom{RoomKey: strconv.Itoa(rm.ID), FloorKey: fk, FloorName: f.Name, StructureKey: sk, RoomType: rm.Type, RoomName: rm.Name, RoomLevel: level}
				area := rm.Area
				pr.RoomArea, pr.RoomAreaUnits, pr.RoomAreaSource = m.area(&area)
				if !hideDims && len(rm.Dims) == 2 {
					w, l := rm.Dims[0], rm.Dims[1]
					pr.RoomWidth, pr.RoomLengthWidthUnits, pr.RoomLengthWidthSource = m.length(&w)
					pr.RoomLength, _, _ = m.length(&l)
				}
				pf.Rooms = append(pf.Rooms, pr)
				a.Rooms = append(a.Rooms, pr)
			}
			ps.Floors = append(ps.Floors, pf)
		}
		a.XSvcStructures = append(a.XSvcStructures, ps)
	}
	mainRoomsFirst(a.Rooms, a.XSvcStructures)
	var pages []mediaCopy
	a.Media, pages = r.mediaRecords(v)
	return site.AutofillDoc{Context: site.ResoContext, Value: []site.Autofill{a}}, pages
}

// mediaRecords returns the autofill media records of view v in the order
// of docs/documents.md#media-records, and the JPEG floor pages they link to (which the view's
// doc folder must then hold).
func (r *renderer) mediaRecords(v *bundle.View) ([]site.Media, []mediaCopy) {
	g := r.g
	records := []site.Media{}
	var pages []mediaCopy
	docURL := func(rel string) string { return joinURL(r.urls.View, site.MediaFile(v.ViewID, rel)) }
	// The branded tour frames the embedded page (agent, video, map, a link
	// to the full guide); the unbranded tour frames the unbranded page,
	// which shows nothing an MLS forbids (docs/pages.md#mls-rules).
	iframe := func(src string) string {
		return `<iframe src="` + html.EscapeString(src) + `" width="100%" height="640" style="border:0" allowfullscreen></iframe>`
	}
	unbranded := joinURL(r.urls.Unbranded, v.ViewID)
	records = append(records,
		site.Media{ResourceName: "Property", MediaCategory: site.MediaBrandedTour, MediaURL: joinURL(r.urls.View, v.ViewID), MediaHTML: iframe(joinURL(r.urls.Embed, v.ViewID))},
		site.Media{ResourceName: "Property", MediaCategory: site.MediaUnbrandedTour, MediaURL: unbranded, MediaHTML: iframe(unbranded)},
	)
	docs := g.ViewDocuments(v)
	lang := autofillLanguage(docs)
	if d, ok := docs[lang]; ok {
		for _, k := range floorPlanKinds() {
			if !site.Shows(site.DocumentFile(k.Key), v.Hidden) {
				continue
			}
			if !k.FloorPages {
				if src := d.File(k.Key); src != "" {
					records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaFloorPlan, MediaType: "pdf",
						MediaURL: docURL(langDocName(lang, k.Key, src)), ShortDescription: k.Units})
				}
				continue
			}
			for _, f := range d.FloorImages(k.Key) {
				name := floorPageName(lang, k.Key, f)
				pages = append(pages, mediaCopy{Dst: name, Src: f.File})
				copies, recs := r.renditions(v, site.FileFloorPage, name, f.File)
				pages = append(pages, copies...)
				r.addRenditions(v.ViewID, docURL(name), recs)
				records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaFloorPlan, MediaType: r.mediaType(f.File),
					MediaURL: docURL(name), ShortDescription: k.Units + " floor page", ImageWidth: f.Width, ImageHeight: f.Height,
					MediaObjectID: k.Key + "-" + strconv.Itoa(f.ID)})
			}
		}
	}
	if site.Shows(site.FilePhoto, v.Hidden) {
		for _, p := range g.Media.Photos {
			pref := p.Preferred
			records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaPhoto, MediaType: r.mediaType(p.File),
				MediaURL: docURL(photoName(p)), ImageWidth: p.Width, ImageHeight: p.Height, PreferredPhotoYN: &pref, MediaObjectID: p.ID})
			_, recs := r.renditions(v, site.FilePhoto, photoName(p), p.File)
			r.addRenditions(v.ViewID, docURL(photoName(p)), recs)
			switch {
			case p.Small != nil && site.Shows(site.FilePhotoSmall, v.Hidden):
				records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaPhoto, MediaType: r.mediaType(p.Small.File),
					MediaURL: docURL(smallPhotoName(p)), ImageWidth: p.Small.Width, ImageHeight: p.Small.Height, PreferredPhotoYN: &pref, MediaObjectID: p.ID})
			case len(recs) > 0:
				// A photo without a small one: its smallest rendition.
				records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaPhoto, MediaType: "jpeg",
					MediaURL: recs[0].URL, ImageWidth: recs[0].Width, ImageHeight: recs[0].Height, PreferredPhotoYN: &pref, MediaObjectID: p.ID})
			default:
				// Small enough already: the photo is its own small one.
				records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaPhoto, MediaType: r.mediaType(p.File),
					MediaURL: docURL(photoName(p)), ImageWidth: p.Width, ImageHeight: p.Height, PreferredPhotoYN: &pref, MediaObjectID: p.ID})
			}
		}
	}
	if g.Media.Video != "" && !v.Hides(bundle.HideVideo) {
		records = append(records, site.Media{ResourceName: "Property", MediaCategory: site.MediaVideo, MediaURL: g.Media.Video})
	}
	return records, pages
}

// floorPlanKinds returns the document kinds autofill lists as floor plan
// media records, in the order it lists them: single files (the PDFs)
// before floor pages, imperial before metric within each.
func floorPlanKinds() []site.DocumentKind {
	var out []site.DocumentKind
	for _, pages := range []bool{false, true} {
		for _, units := range []string{site.UnitsImperial, site.UnitsMetric} {
			for _, k := range site.DocumentKinds {
				if k.FloorPages == pages && k.Units == units {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// privateFile is a media file of the private tree: a bundle file copied to
// site.PrivateDocPath(guideID, Dst).
type privateFile = mediaCopy

// event returns the ready event of the guide (see docs/documents.md#ready-event) and the
// private documents it links to. def is the default view, whose public doc
// folder holds the public documents; a public document the default view
// hides is published privately instead, so the event stays complete while
// the view shows nothing it hides.
func (r *renderer) event(def *bundle.View) (site.ReadyEvent, []privateFile) {
	g := r.g
	var priv []privateFile
	// A public document the default view publishes as it is is linked
	// there; one it hides, or replaces by its own plans, is published
	// privately.
	pub := func(key, dst, src string) string {
		if src == "" {
			return ""
		}
		if !site.Shows(site.DocumentFile(key), def.Hidden) || def.Plans != nil && site.IsPlanKind(key) {
			priv = append(priv, privateFile{Dst: dst, Src: src})
			return site.PrivateURL(r.urls.View, g.GuideID, dst)
		}
		return joinURL(r.urls.View, site.MediaFile(def.ViewID, dst))
	}
	private := func(dst, src string) string {
		if src == "" {
			return ""
		}
		priv = append(priv, privateFile{Dst: dst, Src: src})
		return site.PrivateURL(r.urls.View, g.GuideID, dst)
	}
	floors := func(lang, key string, fs []bundle.FloorImage) []site.FloorImage {
		var out []site.FloorImage
		for _, f := range fs {
			out = append(out, site.FloorImage{ID: f.ID, FloorName: f.FloorName, URL: private(floorPageName(lang, key, f), f.File)})
		}
		return out
	}
	mediaURLs := map[string]site.MediaURLs{}
	for _, lang := range languages(g.Media.Documents) {
		d := g.Media.Documents[lang]
		name := func(key, src string) string { return langDocName(lang, key, src) }
		var urls site.MediaURLs
		for _, k := range site.DocumentKinds {
			switch {
			case k.FloorPages:
				urls.SetFloors(k.Key, floors(lang, k.Key, d.FloorImages(k.Key)))
			case k.Public:
				urls.SetURL(k.Key, pub(k.Key, name(k.Key, d.File(k.Key)), d.File(k.Key)))
			default:
				urls.SetURL(k.Key, private(name(k.Key, d.File(k.Key)), d.File(k.Key)))
			}
		}
		mediaURLs[lang] = urls
	}
	guideType := g.Package
	if guideType == "" {
		guideType = "standard"
	}
	addons := append([]string{}, g.Addons...)
	bi := site.BillingInfo{GuideType: guideType, Package: g.Package, Addons: addons}
	if g.BillableArea != nil {
		ft, m := g.BillableArea.SqFeet, g.BillableArea.SqMeters
		bi.BillableAreaSqFeet, bi.BillableAreaSqMeters = &ft, &m
	}
	ev := site.ReadyEvent{
		Type:          site.EventReady,
		GuideID:       g.GuideID,
		DefaultViewID: def.ViewID,
		GuideAlias:    g.Alias,
		WorkOrderID:   g.WorkOrderID,
		URLs: site.URLs{
			PublicURL:    joinURL(r.urls.View, def.ViewID),
			UnbrandedURL: joinURL(r.urls.Unbranded, def.ViewID),
			EmbeddedURL:  joinURL(r.urls.Embed, def.ViewID),
			ManageURL:    joinURL(r.urls.Base, "guides/"+g.GuideID),
			MediaURLs:    mediaURLs,
		},
		Property:    g.Property,
		Summary:     publicSummary(g.Summary, false),
		BillingInfo: bi,
		Banner:      g.Banner,
	}
	priv = sortCopies(priv)
	return ev, priv
}
