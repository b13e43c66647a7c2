package site

// ResoContext is the @reso.context of every autofill document: the RESO Data
// Dictionary 1.7 Property resource (RCP-025).
const ResoContext = "urn:reso:metadata:1.7:resource:property"

// Unit values of the autofill ...Units fields (RESO lookups AreaUnits and
// LinearUnits, display form; see docs/documents.md#units).
const (
	SquareFeet   = "Square Feet"
	SquareMeters = "Square Meters"
	Feet         = "Feet"
	Meters       = "Meters"
)

// AutofillDoc is the body of GET {viewId}/reso/autofill: exactly one
// Autofill object in Value.
type AutofillDoc struct {
	Context string     `json:"@reso.context"`
	Value   []Autofill `json:"value"`
}

// Autofill is the Property object of an autofill document (see docs/documents.md#autofill). Values are already converted to the
// view's units and rounded to 2 decimals; every present measure carries its
// Units and Source fields.
type Autofill struct {
	Country         string `json:"Country,omitempty"`
	StateOrProvince string `json:"StateOrProvince,omitempty"`
	City            string `json:"City,omitempty"`
	PostalCode      string `json:"PostalCode,omitempty"`
	StreetName      string `json:"StreetName,omitempty"`
	StreetNumber    string `json:"StreetNumber,omitempty"`
	UnitNumber      string `json:"UnitNumber,omitempty"`
	StructureMeasures
	Media          []Media             `json:"Media"`
	Rooms          []PropertyRoom      `json:"Rooms"`
	XSvcStructures []PropertyStructure `json:"xSvcStructures"`
}

// StructureMeasures are the structure-level area and wall-thickness
// measures shared by the Autofill and PropertyStructure objects.
type StructureMeasures struct {
	AboveGradeFinishedArea         *float64 `json:"AboveGradeFinishedArea,omitempty"`
	AboveGradeFinishedAreaUnits    string   `json:"AboveGradeFinishedAreaUnits,omitempty"`
	AboveGradeFinishedAreaSource   string   `json:"AboveGradeFinishedAreaSource,omitempty"`
	BelowGradeFinishedArea         *float64 `json:"BelowGradeFinishedArea,omitempty"`
	BelowGradeFinishedAreaUnits    string   `json:"BelowGradeFinishedAreaUnits,omitempty"`
	BelowGradeFinishedAreaSource   string   `json:"BelowGradeFinishedAreaSource,omitempty"`
	AboveGradeUnfinishedArea       *float64 `json:"AboveGradeUnfinishedArea,omitempty"`
	AboveGradeUnfinishedAreaUnits  string   `json:"AboveGradeUnfinishedAreaUnits,omitempty"`
	AboveGradeUnfinishedAreaSource string   `json:"AboveGradeUnfinishedAreaSource,omitempty"`
	BelowGradeUnfinishedArea       *float64 `json:"BelowGradeUnfinishedArea,omitempty"`
	BelowGradeUnfinishedAreaUnits  string   `json:"BelowGradeUnfinishedAreaUnits,omitempty"`
	BelowGradeUnfinishedAreaSource string   `json:"BelowGradeUnfinishedAreaSource,omitempty"`
	AboveGradeInteriorArea         *float64 `json:"AboveGradeInteriorArea,omitempty"`
	AboveGradeInteriorAreaUnits    string   `json:"AboveGradeInteriorAreaUnits,omitempty"`
	AboveGradeInteriorAreaSource   string   `json:"AboveGradeInteriorAreaSource,omitempty"`
	BelowGradeInteriorArea         *float64 `json:"BelowGradeInteriorArea,omitempty"`
	BelowGradeInteriorAreaUnits    string   `json:"BelowGradeInteriorAreaUnits,omitempty"`
	BelowGradeInteriorAreaSource   string   `json:"BelowGradeInteriorAreaSource,omitempty"`
	AboveGradeExteriorArea         *float64 `json:"AboveGradeExteriorArea,omitempty"`
	AboveGradeExteriorAreaUnits    string   `json:"AboveGradeExteriorAreaUnits,omitempty"`
	AboveGradeExteriorAreaSource   string   `json:"AboveGradeExteriorAreaSource,omitempty"`
	BelowGradeExteriorArea         *float64 `json:"BelowGradeExteriorArea,omitempty"`
	BelowGradeExteriorAreaUnits    string   `json:"BelowGradeExteriorAreaUnits,omitempty"`
	BelowGradeExteriorAreaSource   string   `json:"BelowGradeExteriorAreaSource,omitempty"`
	AboveGradeExcludedArea         *float64 `json:"AboveGradeExcludedArea,omitempty"`
	AboveGradeExcludedAreaUnits    string   `json:"AboveGradeExcludedAreaUnits,omitempty"`
	AboveGradeExcludedAreaSource   string   `json:"AboveGradeExcludedAreaSource,omitempty"`
	BelowGradeExcludedArea         *float64 `json:"BelowGradeExcludedArea,omitempty"`
	BelowGradeExcludedAreaUnits    string   `json:"BelowGradeExcludedAreaUnits,omitempty"`
	BelowGradeExcludedAreaSource   string   `json:"BelowGradeExcludedAreaSource,omitempty"`
	PerimeterWallThickness         *float64 `json:"PerimeterWallThickness,omitempty"`
	PerimeterWallThicknessUnits    string   `json:"PerimeterWallThicknessUnits,omitempty"`
	PerimeterWallThicknessSource   string   `json:"PerimeterWallThicknessSource,omitempty"`
}

// Media category values (see docs/documents.md#media-records).
const (
	MediaBrandedTour   = "Branded Virtual Tour"
	MediaUnbrandedTour = "Unbranded Virtual Tour"
	MediaFloorPlan     = "Floor Plan"
	MediaPhoto         = "Photo"
	MediaVideo         = "Video"
)

// Media is one media record of an Autofill (see docs/documents.md#media-records).
type Media struct {
	ResourceName     string `json:"ResourceName"`
	MediaCategory    string `json:"MediaCategory"`
	MediaType        string `json:"MediaType,omitempty"`
	MediaURL         string `json:"MediaURL"`
	MediaHTML        string `json:"MediaHTML,omitempty"`
	ShortDescription string `json:"ShortDescription,omitempty"`
	ImageWidth       int    `json:"ImageWidth,omitempty"`
	ImageHeight      int    `json:"ImageHeight,omitempty"`
	PreferredPhotoYN *bool  `json:"PreferredPhotoYN,omitempty"`
	MediaObjectID    string `json:"MediaObjectID,omitempty"`
}

// PropertyRoom is one room of an Autofill, with the names
// RoomLengthWidthUnits and RoomLengthWidthSource (see docs/documents.md#document-kinds).
type PropertyRoom struct {
	RoomKey               string   `json:"RoomKey"`
	FloorKey              string   `json:"FloorKey"`
	FloorName             string   `json:"FloorName"`
	StructureKey          string   `json:"StructureKey"`
	RoomType              string   `json:"RoomType"`
	RoomName              string   `json:"RoomName"`
	RoomLevel             string   `json:"RoomLevel,omitempty"`
	RoomArea              *float64 `json:"RoomArea,omitempty"`
	RoomAreaUnits         string   `json:"RoomAreaUnits,omitempty"`
	RoomAreaSource        string   `json:"RoomAreaSource,omitempty"`
	RoomWidth             *float64 `json:"RoomWidth,omitempty"`
	RoomLength            *float64 `json:"RoomLength,omitempty"`
	RoomLengthWidthUnits  string   `json:"RoomLengthWidthUnits,omitempty"`
	RoomLengthWidthSource string   `json:"RoomLengthWidthSource,omitempty"`
}

// PropertyStructure is one building of an Autofill (vendor
// extension xSvcStructures).
type PropertyStructure struct {
	StructureKey    string `json:"StructureKey"`
	StructureName   string `json:"StructureName"`
	MainStructureYN bool   `json:"MainStructureYN"`
	StructureMeasures
	FloorsTotal int             `json:"FloorsTotal"`
	Floors      []PropertyFloor `json:"Floors"`
}

// PropertyFloor is one floor of an Autofill.
type PropertyFloor struct {
	FloorKey                     string         `json:"FloorKey"`
	StructureKey                 string         `json:"StructureKey"`
	FloorName                    string         `json:"FloorName"`
	BelowGradeYN                 bool           `json:"BelowGradeYN"`
	InteriorArea                 *float64       `json:"InteriorArea,omitempty"`
	InteriorAreaUnits            string         `json:"InteriorAreaUnits,omitempty"`
	InteriorAreaSource           string         `json:"InteriorAreaSource,omitempty"`
	ExteriorArea                 *float64       `json:"ExteriorArea,omitempty"`
	ExteriorAreaUnits            string         `json:"ExteriorAreaUnits,omitempty"`
	ExteriorAreaSource           string         `json:"ExteriorAreaSource,omitempty"`
	FinishedArea                 *float64       `json:"FinishedArea,omitempty"`
	FinishedAreaUnits            string         `json:"FinishedAreaUnits,omitempty"`
	FinishedAreaSource           string         `json:"FinishedAreaSource,omitempty"`
	PerimeterWallLength          *float64       `json:"PerimeterWallLength,omitempty"`
	PerimeterWallLengthUnits     string         `json:"PerimeterWallLengthUnits,omitempty"`
	PerimeterWallLengthSource    string         `json:"PerimeterWallLengthSource,omitempty"`
	PerimeterWallThickness       *float64       `json:"PerimeterWallThickness,omitempty"`
	PerimeterWallThicknessUnits  string         `json:"PerimeterWallThicknessUnits,omitempty"`
	PerimeterWallThicknessSource string         `json:"PerimeterWallThicknessSource,omitempty"`
	RoomsTotal                   int            `json:"RoomsTotal"`
	Rooms                        []PropertyRoom `json:"Rooms"`
}
