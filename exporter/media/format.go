package media

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
)

// Format is the kind of content of a media file.
type Format string

// The formats a bundle's media files may have.
const (
	JPEG Format = "jpeg"
	PNG  Format = "png"
	GIF  Format = "gif"
	PDF  Format = "pdf"
	ZIP  Format = "zip"
)

// IsImage reports whether f is an image format.
func (f Format) IsImage() bool { return f == JPEG || f == PNG || f == GIF }

// Name returns how a message names the format ("a JPEG image").
func (f Format) Name() string {
	switch f {
	case JPEG:
		return "a JPEG image"
	case PNG:
		return "a PNG image"
	case GIF:
		return "a GIF image"
	case PDF:
		return "a PDF document"
	case ZIP:
		return "a ZIP archive"
	}
	return "an unknown format"
}

// ByExtension returns the format a file name's extension (".jpg",
// ".JPEG"...) promises, and false for an extension of no known format.
func ByExtension(ext string) (Format, bool) {
	switch strings.ToLower(ext) {
	case ".jpg", ".jpeg":
		return JPEG, true
	case ".png":
		return PNG, true
	case ".gif":
		return GIF, true
	case ".pdf":
		return PDF, true
	case ".zip":
		return ZIP, true
	}
	return "", false
}

// Info is what checking a media file found.
type Info struct {
	Format Format
	// Width and Height are an image's stored pixel size; zero for other
	// formats.
	Width, Height int
	// Decode is what decoding an image for its renditions, or rebuilding
	// a PDF, costs, as the headers (a PDF's packed streams) say; zero for
	// a ZIP archive.
	Decode DecodeCost
}

// DefaultMaxPixels bounds the pixel count of one image when no limit is
// given: 50 megapixels, above any camera photo or floor plan page a guide
// needs, and about 200 MB once decoded for a rendition.
const DefaultMaxPixels = 50_000_000

// File is what Check reads: a bundle file (an afero.File is one).
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// Check reads f (of size bytes) far enough to know what it is and returns
// its format, for an image its pixel size, and for an image or a PDF what
// decoding it will cost (Info.Decode). It returns an error, whose message
// names no path and reads after "the file is ", when the content is no
// format of this package; an image has more pixels than lim.Pixels, its
// structure is broken or truncated, or its headers say that decoding it
// costs more than lim allows (a *BudgetError); a PDF does not start and
// end as one or would cost more memory than lim.Memory to rebuild; or a ZIP
// archive does not open or names an entry outside the folder it unpacks
// into. Memory stays small whatever the file: nothing is decoded beyond
// headers (a PDF's packed streams are inflated into nothing to count
// them; it is parsed when RebuildPDF rebuilds it).
func Check(f File, size int64, lim Limits) (Info, error) {
	lim = lim.WithDefaults()
	var head [8]byte
	n, _ := io.ReadFull(f, head[:])
	format, ok := sniff(head[:n])
	if !ok {
		return Info{}, errors.New("not a JPEG, PNG, GIF, PDF or ZIP file" + looksLike(head[:n]))
	}
	info := Info{Format: format}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return info, err
	}
	switch format {
	case PDF:
		return checkPDF(f, size, lim)
	case ZIP:
		return info, checkZIP(f, size)
	}
	return checkImage(f, format, lim)
}

// checkImage is Check for an image.
func checkImage(f File, format Format, lim Limits) (Info, error) {
	info := Info{Format: format}
	br := bufio.NewReaderSize(f, 32<<10)
	cfg, err := decodeConfig(format, br)
	if err != nil {
		return info, fmt.Errorf("%s whose header does not decode: %v", format.Name(), err)
	}
	info.Width, info.Height = cfg.Width, cfg.Height
	if err := checkPixels(cfg.Width, cfg.Height, lim.Pixels); err != nil {
		return info, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return info, err
	}
	br.Reset(f)
	_, info.Decode, err = strip(io.Discard, br, format)
	if err != nil {
		return info, err
	}
	return info, info.Decode.check(format, lim)
}

// PixelLimitError is the error of an image with more pixels than the
// limit.
type PixelLimitError struct {
	Width, Height, Max int
}

func (e *PixelLimitError) Error() string {
	return fmt.Sprintf("an image of %d×%d pixels (%.1f megapixels), more than the limit of %.1f megapixels for one image (raise it with --max-image-pixels)",
		e.Width, e.Height, float64(e.Width)*float64(e.Height)/1e6, float64(e.Max)/1e6)
}

func checkPixels(w, h, max int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("an image that declares a size of %d×%d pixels", w, h)
	}
	if int64(w)*int64(h) > int64(max) {
		return &PixelLimitError{Width: w, Height: h, Max: max}
	}
	return nil
}

func decodeConfig(f Format, r io.Reader) (image.Config, error) {
	switch f {
	case JPEG:
		return jpeg.DecodeConfig(r)
	case PNG:
		return png.DecodeConfig(r)
	case GIF:
		return gif.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("%s is not an image", f)
}

// sniff returns the format head (a file's first bytes) starts as.
func sniff(head []byte) (Format, bool) {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG, true
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, true
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF, true
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return ZIP, true
	}
	return "", false
}

// looksLike adds a hint to the message of an unknown format when the file
// starts as text (an HTML error page saved under a media name).
func looksLike(head []byte) string {
	t := strings.ToLower(strings.TrimSpace(string(head)))
	switch {
	case t == "":
		return " (it is empty)"
	case strings.HasPrefix(t, "<"):
		return " (it starts like HTML or XML)"
	}
	for _, c := range head {
		if c < 0x09 || c > 0x7e {
			return ""
		}
	}
	return " (it starts like text)"
}

// checkPDF checks that a PDF also ends as one ("%%EOF" in its last KiB)
// and that rebuilding it costs at most lim.Memory, counting what its
// object and cross-reference streams decode to (pdfCost). The document
// is parsed when it is rebuilt (RebuildPDF), within the exporter's
// budget.
func checkPDF(f File, size int64, lim Limits) (Info, error) {
	info := Info{Format: PDF}
	if err := checkEOF(f, size); err != nil {
		return info, err
	}
	var err error
	if info.Decode, err = pdfCost(f, size, lim.Memory); err != nil {
		return info, err
	}
	return info, info.Decode.check(PDF, lim)
}

// checkEOF checks that a PDF has "%%EOF" in its last KiB.
func checkEOF(f File, size int64) error {
	tail := make([]byte, min(size, 1024))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
		return err
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return errors.New("a PDF document with no end-of-file marker (%%EOF) in its last KiB: truncated")
	}
	return nil
}

// checkZIP checks that a ZIP archive's directory reads and that every
// entry unpacks inside the folder it is unpacked into.
func checkZIP(f File, size int64) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return fmt.Errorf("a ZIP archive that does not open: %v", err)
	}
	for _, zf := range zr.File {
		if msg := unsafeEntry(zf.Name); msg != "" {
			return fmt.Errorf("a ZIP archive with the entry %q, which %s", zf.Name, msg)
		}
	}
	return nil
}

// unsafeEntry returns why a ZIP entry name would unpack outside its
// folder, or "".
func unsafeEntry(name string) string {
	n := strings.ReplaceAll(name, `\`, "/")
	switch {
	case name == "":
		return "is empty"
	case strings.ContainsRune(name, 0):
		return "holds a NUL byte"
	case strings.HasPrefix(n, "/"), len(n) >= 2 && n[1] == ':':
		return "is an absolute path"
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return `leaves the folder it unpacks into ("..")`
		}
	}
	return ""
}
