package render

import (
	"html"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

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
		m.areaUnits, m.linearUnits, m.areaPerUnit, m.lenPerUnit = site.SquareFeet, site.Feet, site.MM2PerSqFoot, site.MMPerFoot
	} else {
		m.areaUnits, m.linearUnits, m.areaPerUnit, m.lenPerUnit = site.SquareMeters, site.Meters, site.MM2PerSqMeter, site.MMPerMeter
	}
	return m
}

// area converts an area in mm2; it returns nil and empty strings for an
// absent value or when measurements are hidden.
func (m measurer) area(mm2 *float64) (*float64, string, string) {
	if m.off || mm2 == nil {
		return nil, "", ""
	}
	v := site.Round2(*mm2 / m.areaPerUnit)
	return &v, m.areaUnits, m.source
}

// length converts a length in mm like area does.
func (m measurer) length(mm *float64) (*float64, string, string) {
	if m.off || mm == nil {
		return nil, "", ""
	}
	v := site.Round2(*mm / m.lenPerUnit)
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
