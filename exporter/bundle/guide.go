package bundle

import (
	"slices"
	"time"

	"github.com/guidepub/guidepub/site"
)

// FileName is the name of a bundle's description file inside its folder.
const FileName = "guide.json"

// Guide is the content of a bundle's guide.json (see docs/documents.md#the-bundle).
// Lengths are in mm and areas in mm2, as in the View API.
type Guide struct {
	// Schema names the JSON Schema the file follows, for editors; guidepub
	// ignores it.
	Schema       string        `json:"$schema,omitempty"`
	GuideID      string        `json:"guideId" bundle:"required"`
	Alias        string        `json:"alias,omitempty"`
	OwnerID      string        `json:"ownerId" bundle:"required"`
	WorkOrderID  string        `json:"workOrderId" bundle:"required"`
	Package      string        `json:"package"`
	Addons       []string      `json:"addons,omitempty"`
	BillableArea *BillableArea `json:"billableArea,omitempty"`
	Property     site.Property `json:"property" bundle:"required"`
	Banner       *site.Banner  `json:"banner,omitempty"`
	// Summary is nil while the guide is not drafted: its views read not-ready.
	Summary  *site.Summary  `json:"summary,omitempty"`
	Media    Media          `json:"media"`
	Views    []View         `json:"views" bundle:"required"`
	Webhooks []site.Webhook `json:"webhooks,omitempty"`

	// DefaultLanguage is the language of the view pages at the URLs
	// without a language segment (docs/pages.md#languages); "" lets
	// guidepub pick (English when the guide has English documents).
	DefaultLanguage string `json:"defaultLanguage,omitempty"`
}

// BillableArea is the guide's billable area in both unit systems.
type BillableArea struct {
	SqFeet   float64 `json:"sqFeet" bundle:"required"`
	SqMeters float64 `json:"sqMeters" bundle:"required"`
}

// Media names the guide's media. Every file is a slash-separated path
// relative to the bundle folder.
type Media struct {
	Photos []Photo `json:"photos,omitempty"`
	// Video is the URL of an external video, or "".
	Video string `json:"video,omitempty"`
	// BannerImage is the agent's photo or the brokerage's logo, shown
	// beside the banner on the branded page only (docs/pages.md); it needs
	// a banner.
	BannerImage *Image `json:"bannerImage,omitempty"`
	// Documents are keyed by language (site.Languages).
	Documents map[string]Documents `json:"documents,omitempty"`
}

// Photo is one gallery photo with an optional smaller rendition.
type Photo struct {
	ID        string `json:"id" bundle:"required"`
	File      string `json:"file" bundle:"required"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
	Small     *Image `json:"small,omitempty"`
	Preferred bool   `json:"preferred,omitempty"`
}

// Image is a file with its pixel size.
type Image struct {
	File   string `json:"file" bundle:"required"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
}

// Documents names the files of the bundle holding the documents of one
// language: one field per site.DocumentKinds entry, with the kind's key as
// JSON key (a FloorImage list for site.DocumentKind.FloorPages kinds). Code
// that handles every kind loops over site.DocumentKinds with File and
// FloorImages rather than naming the fields.
type Documents struct {
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

// FloorImage is one floor's JPEG floor plan page.
type FloorImage struct {
	ID        int    `json:"id" bundle:"required"`
	FloorName string `json:"floorName" bundle:"required"`
	File      string `json:"file" bundle:"required"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
}

// Unit systems of a view's autofill document.
const (
	UnitsImperial = site.UnitsImperial
	UnitsMetric   = site.UnitsMetric
)

// Hidden features a view may list (see docs/documents.md#hidden-features).
const (
	HideMeasurements   = site.HideMeasurements
	HideRoomDimensions = site.HideRoomDimensions
	HideAddress        = site.HideAddress
	HideFloorPlans     = site.HideFloorPlans
	HidePhotos         = site.HidePhotos
	HideVideo          = site.HideVideo
	HideAutofill       = site.HideAutofill
)

// HiddenFeatures lists every valid value of View.Hidden.
var HiddenFeatures = site.HiddenFeatures

// View is one public view of the guide.
type View struct {
	ViewID  string `json:"viewId" bundle:"required"`
	Default bool   `json:"default,omitempty"`
	Locked  bool   `json:"locked,omitempty"`
	// ExpiresAt, when set, locks the view from that instant on.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Units is UnitsImperial, UnitsMetric or "" (imperial in the US,
	// metric elsewhere).
	Units  string   `json:"units,omitempty"`
	Hidden []string `json:"hidden,omitempty"`
	// Plans, when set, are the floor plans the view shows instead of the
	// guide's: keyed by language like Media.Documents, holding only floor
	// plan kinds (site.IsPlanKind). A plan kind they leave out the view
	// does not show, whatever the guide has (docs/bundle.md#per-view-plans).
	Plans map[string]Documents `json:"plans,omitempty"`
}

// Hides reports whether the view hides feature.
func (v *View) Hides(feature string) bool {
	for _, h := range v.Hidden {
		if h == feature {
			return true
		}
	}
	return false
}

// ViewDocuments returns the documents view v publishes, by language: the
// guide's, with the floor plan kinds taken from the view's own plans when
// it has some (none of the guide's then).
func (g *Guide) ViewDocuments(v *View) map[string]Documents {
	if v.Plans == nil {
		return g.Media.Documents
	}
	out := map[string]Documents{}
	for lang, d := range g.Media.Documents {
		for _, k := range site.DocumentKinds {
			if site.IsPlanKind(k.Key) {
				d.field(k.Key).SetZero()
			}
		}
		out[lang] = d
	}
	for lang, p := range v.Plans {
		d := out[lang]
		for _, k := range site.DocumentKinds {
			if site.IsPlanKind(k.Key) {
				d.field(k.Key).Set(p.field(k.Key))
			}
		}
		out[lang] = d
	}
	return out
}

// DefaultView returns the guide's default view, or nil if it has none (a
// validated guide always has exactly one).
func (g *Guide) DefaultView() *View {
	for i := range g.Views {
		if g.Views[i].Default {
			return &g.Views[i]
		}
	}
	return nil
}

// PublicIDs returns the top-level public folders guide g claims: its view
// ids in order, then its alias unless it is one of them.
func (g *Guide) PublicIDs() []string {
	ids := make([]string, 0, len(g.Views)+1)
	for _, v := range g.Views {
		ids = append(ids, v.ViewID)
	}
	if g.Alias != "" && !slices.Contains(ids, g.Alias) {
		ids = append(ids, g.Alias)
	}
	return ids
}
