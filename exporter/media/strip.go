package media

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Kept is what a stripped image keeps for correct display, which its
// renditions carry too.
type Kept struct {
	// Orientation is the EXIF orientation (2 to 8), 0 when the image is
	// shown as stored.
	Orientation int
	// ICC is the image's colour profile, nil when it has none.
	ICC []byte
}

// maxICC bounds the colour profile kept in memory for renditions.
const maxICC = 1 << 20

// Strip copies the image src of format f to dst with only what display
// needs (see docs/output.md#images), rebuilt where it could carry more:
// for JPEG the frame and scans with their tables, JFIF's fields without
// its thumbnail, Adobe's fixed fields (APP14), the ICC profile (APP2) and
// a minimal EXIF block holding only the orientation (when not 1); every
// other segment is dropped, as are tables after the last scan. For PNG
// the image data, palette, transparency, colour space and animation
// chunks of their proper lengths, the ICC profile (iCCP) recompressed
// under the name "ICC Profile" and the orientation as a minimal eXIf. For
// GIF the frames, the graphic control extension's four bytes and the
// loop count of the looping extension; every other extension is dropped.
// Data after the image's end marker (an appended video, a trailer) is
// dropped. The image data is copied byte for byte. It returns what was
// kept for display, or an error when src is not a well-formed image of
// format f.
func Strip(dst io.Writer, src io.Reader, f Format) (Kept, error) {
	br, ok := src.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(src, 32<<10)
	}
	bw := bufio.NewWriterSize(dst, 32<<10)
	k, _, err := strip(bw, br, f)
	if err != nil {
		return k, err
	}
	return k, bw.Flush()
}

// strip is Strip, and also returns what decoding the image will cost.
func strip(dst io.Writer, src *bufio.Reader, f Format) (Kept, DecodeCost, error) {
	switch f {
	case JPEG:
		return stripJPEG(dst, src)
	case PNG:
		return stripPNG(dst, src)
	case GIF:
		c, err := stripGIF(dst, src)
		return Kept{}, c, err
	}
	return Kept{}, DecodeCost{}, fmt.Errorf("%s is not an image", f)
}

// truncated wraps the error of a read that ended early.
func truncated(f Format, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s that is truncated (it ends before its end marker)", f.Name())
	}
	return err
}
