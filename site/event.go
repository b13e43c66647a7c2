package site

// EventReady is the only event type (see docs/documents.md#ready-event).
const EventReady = "ready"

// ReadyEvent is the event of a guide whose default view is ready (see
// docs/documents.md#ready-event). The exporter writes it without AuthToken; the
// sidecar adds a fresh token each time it serves or dispatches the event.
type ReadyEvent struct {
	Type          string      `json:"type"`
	GuideID       string      `json:"guideId"`
	DefaultViewID string      `json:"defaultViewId"`
	GuideAlias    string      `json:"guideAlias"`
	WorkOrderID   string      `json:"workOrderId"`
	AuthToken     string      `json:"authtoken,omitempty"`
	URLs          URLs        `json:"urls"`
	Property      Property    `json:"property"`
	Summary       *Summary    `json:"summary,omitempty"`
	BillingInfo   BillingInfo `json:"billingInfo"`
	Banner        *Banner     `json:"banner,omitempty"`
}

// Property is the address and facts of the property; the bundle uses the same shape.
type Property struct {
	FullAddress   string    `json:"fullAddress"`
	Country       string    `json:"country"`
	City          string    `json:"city"`
	PostalCode    string    `json:"postalCode"`
	StateProvince string    `json:"stateProvince"`
	StreetName    string    `json:"streetName"`
	StreetNumber  string    `json:"streetNumber"`
	Unit          *string   `json:"unit,omitempty"` // nil when not given; "" is kept
	Location      *Location `json:"location,omitempty"`
}

// Location holds a property's coordinates.
type Location struct {
	Lat float64 `json:"lat"`
	Lng float64 `json:"lng"`
}

// BillingInfo is the billing part of a ReadyEvent (see docs/documents.md#ready-event).
type BillingInfo struct {
	GuideType            string   `json:"guideType"`
	Package              string   `json:"package"`
	Addons               []string `json:"addons"`
	BillableAreaSqFeet   *float64 `json:"billableAreaSqFeet,omitempty"`
	BillableAreaSqMeters *float64 `json:"billableAreaSqMeters,omitempty"`
}

// Banner is the owner's branding shown with a view; the bundle uses the
// same shape. An optional field is left out of the event only when the
// bundle left it out: a string given as "" and a list given as [] are kept
// (nil pointers and nil lists are the fields not given).
type Banner struct {
	FullName    string       `json:"fullName"`
	Title       *string      `json:"title,omitempty"`
	Company     *string      `json:"company,omitempty"`
	Phones      []Phone      `json:"phones,omitzero"`
	Emails      []string     `json:"emails,omitzero"`
	Website     *string      `json:"website,omitempty"`
	SocialLinks []SocialLink `json:"socialLinks,omitzero"`
}

// Phone is one element of Banner.Phones.
type Phone struct {
	Label  string `json:"label"`
	Number string `json:"number"`
}

// SocialLink is one element of Banner.SocialLinks.
type SocialLink struct {
	Label string `json:"label"`
	Link  string `json:"link"`
}

// URLs are the links of a ReadyEvent, with the name embeddedUrl (see
// docs/documents.md#document-kinds).
type URLs struct {
	PublicURL    string               `json:"publicUrl"`
	UnbrandedURL string               `json:"unbrandedUrl"`
	EmbeddedURL  string               `json:"embeddedUrl"`
	ManageURL    string               `json:"manageUrl"`
	MediaURLs    map[string]MediaURLs `json:"mediaUrls"`
}

// Languages are the keys of the Localized Media URL Object, in the order
// guidepub prefers them when it must pick one.
var Languages = []string{"en", "fr", "es", "it", "zh"}

// MediaURLs are the links of the documents of one language: one field per
// DocumentKinds entry, with its key as JSON key (see
// docs/documents.md#document-kinds). Code that handles every kind loops over
// DocumentKinds with URL, SetURL, Floors and SetFloors. Private entries point at the sidecar and need
// ?accessToken=.
type MediaURLs struct {
	GalleryFrontImage string       `json:"galleryFrontImage,omitempty"`
	PDFMetric         string       `json:"pdfMetric,omitempty"`
	PDFImperial       string       `json:"pdfImperial,omitempty"`
	EmbedImage        string       `json:"embedImage,omitempty"`
	GalleryZip        string       `json:"galleryZip,omitempty"`
	GalleryLowResZip  string       `json:"galleryLowResZip,omitempty"`
	SphereZip         string       `json:"sphereZip,omitempty"`
	OfflineZip        string       `json:"offlineZip,omitempty"`
	SVGZip            string       `json:"svgZip,omitempty"`
	DXFZip            string       `json:"dxfZip,omitempty"`
	TagImagesZip      string       `json:"tagImagesZip,omitempty"`
	JPGMetric         []FloorImage `json:"jpgMetric,omitempty"`
	JPGImperial       []FloorImage `json:"jpgImperial,omitempty"`
}

// FloorImage is one element of MediaURLs.JPGMetric or JPGImperial.
type FloorImage struct {
	ID        int    `json:"id"`
	FloorName string `json:"floorName"`
	URL       string `json:"url"`
}
