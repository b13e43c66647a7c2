package jpegscale_test

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"testing"

	"github.com/guidepub/guidepub/exporter/media/jpegscale"
	"github.com/guidepub/guidepub/exporter/media/mediatest"
)

// BenchmarkDecode decodes a 12-megapixel photo (4000×3000, Go's encoder,
// 4:2:0) with image/jpeg, and with jpegscale at each scale (scale-2 is
// at 1/2).
func BenchmarkDecode(b *testing.B) {
	data := goJPEG(b, mediatest.Scene(4000, 3000), 85)
	b.Run("image-jpeg", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, s := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprint("scale-", s), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for range b.N {
				if _, err := jpegscale.Decode(bytes.NewReader(data), s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
