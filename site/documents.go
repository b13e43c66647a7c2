package site

// View status values (see docs/documents.md#statuses).
const (
	StatusReady    = "ready"
	StatusNotReady = "not-ready"
	StatusLocked   = "locked"
)

// Measurement standards (see docs/documents.md#summary).
const (
	StandardANSI = "ansi"
	StandardRMS  = "rms"
)

// StatusDoc is the body of GET {viewId}/data/status.
type StatusDoc struct {
	Status string `json:"status"`
}

// SummaryDoc is the body of GET {viewId}/data/summary. Summary is nil for a
// view that is not ready (see docs/documents.md#statuses).
type SummaryDoc struct {
	Status  string   `json:"status"`
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is the measurement summary of a guide (see docs/documents.md#summary). Areas are in mm2, lengths in mm.
type Summary struct {
	MeasurementStandard string     `json:"measurementStandard"`
	Buildings           []Building `json:"buildings"`
}

// Building is one building of a Summary. A nil measure has no value and is
// left out of the JSON.
type Building struct {
	ID                       int      `json:"id"`
	Name                     string   `json:"name"`
	IntAreaAboveGrade        *float64 `json:"intAreaAboveGrade,omitempty"`
	ExtAreaAboveGrade        *float64 `json:"extAreaAboveGrade,omitempty"`
	IntAreaTotal             *float64 `json:"intAreaTotal,omitempty"`
	ExtAreaTotal             *float64 `json:"extAreaTotal,omitempty"`
	ExcludedAreaAboveGrade   *float64 `json:"excludedAreaAboveGrade,omitempty"`
	ExcludedAreaTotal        *float64 `json:"excludedAreaTotal,omitempty"`
	FinishedAreaTotal        *float64 `json:"finishedAreaTotal,omitempty"`
	UnfinishedAreaTotal      *float64 `json:"unfinishedAreaTotal,omitempty"`
	FinishedAreaAboveGrade   *float64 `json:"finishedAreaAboveGrade,omitempty"`
	UnfinishedAreaAboveGrade *float64 `json:"unfinishedAreaAboveGrade,omitempty"`
	FinishedAreaBelowGrade   *float64 `json:"finishedAreaBelowGrade,omitempty"`
	UnfinishedAreaBelowGrade *float64 `json:"unfinishedAreaBelowGrade,omitempty"`
	WallThickness            *float64 `json:"wallThickness,omitempty"`
	IsMainBuilding           bool     `json:"isMainBuilding"`
	Floors                   []Floor  `json:"floors"`
}

// Floor is one floor of a Building.
type Floor struct {
	ID             int      `json:"id"`
	Name           string   `json:"name"`
	InteriorArea   *float64 `json:"interiorArea,omitempty"`
	ExteriorArea   *float64 `json:"exteriorArea,omitempty"`
	FinishedArea   *float64 `json:"finishedArea,omitempty"`
	UnfinishedArea *float64 `json:"unfinishedArea,omitempty"`
	ExcludedArea   *float64 `json:"excludedArea,omitempty"`
	Perimeter      *float64 `json:"perimeter,omitempty"`
	WallThickness  *float64 `json:"wallThickness,omitempty"`
	IsBelowGrade   bool     `json:"isBelowGrade"`
	Rooms          []Room   `json:"rooms"`
}

// Room is one room of a Floor. Dims is empty or [width, length] in mm and
// is always present in the JSON (as [] when empty).
type Room struct {
	ID                       int           `json:"id"`
	Type                     string        `json:"type"`
	Name                     string        `json:"name"`
	Dims                     []float64     `json:"dims"`
	Area                     float64       `json:"area"`
	Perimeter                *float64      `json:"perimeter,omitempty"`
	PerimeterWithoutOpenings *float64      `json:"perimeterWithoutOpenings,omitempty"`
	WallArea                 *float64      `json:"wallArea,omitempty"`
	WallAreaWithoutOpenings  *float64      `json:"wallAreaWithoutOpenings,omitempty"`
	Volume                   *float64      `json:"volume,omitempty"`
	WallSegments             []WallSegment `json:"wallSegments,omitempty"`
}

// WallSegment is one wall segment of a Room.
type WallSegment struct {
	Length              float64 `json:"length"`
	Height              float64 `json:"height"`
	Area                float64 `json:"area"`
	AreaWithoutOpenings float64 `json:"areaWithoutOpenings"`
}
