package bundle

import (
	"slices"
	"testing"

	"github.com/guidepub/guidepub/site"
)

func TestDocumentsByKind(t *testing.T) {
	d := Documents{GalleryFrontImage: "front.jpg", TagImagesZip: "tags.zip",
		JPGImperial: []FloorImage{{ID: 1, File: "i1.jpg"}, {ID: 2, File: "i2.jpg"}}}
	if got := d.File("galleryFrontImage"); got != "front.jpg" {
		t.Errorf("File(galleryFrontImage) = %q", got)
	}
	if got := d.File("pdfMetric"); got != "" {
		t.Errorf("File(pdfMetric) = %q", got)
	}
	if got := d.FloorImages("jpgImperial"); len(got) != 2 {
		t.Errorf("FloorImages(jpgImperial) = %v", got)
	}
	if got, want := d.Files(), []string{"front.jpg", "tags.zip", "i1.jpg", "i2.jpg"}; !slices.Equal(got, want) {
		t.Errorf("Files() = %v, want %v", got, want)
	}
	for _, k := range site.DocumentKinds {
		if _, ok := documentFields[k.Key]; !ok {
			t.Errorf("Documents has no field for kind %s", k.Key)
		}
	}
}
