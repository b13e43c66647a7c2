// Package media checks that a bundle's media files are what they claim to
// be, strips private metadata from published images and PDFs and makes
// the images' resized renditions (see docs/bundle.md#media-files and
// docs/output.md#images).
//
// Checking reads a file's structure without decoding its pixels: the
// magic bytes, the image header (image.DecodeConfig) bounded by a pixel
// limit, and then every segment (JPEG), chunk (PNG) or block (GIF) up to
// the end marker, so that a truncated or padded file is found before
// anything is published. Stripping is the same walk with an output: the
// segments that display needs are copied byte for byte, the others
// dropped, and the compressed image data is never decoded or re-encoded.
// No maintained Go library does this as a stream (the ones found read
// whole files into memory, parse every EXIF tag or keep the EXIF block
// and blank its values), so the walkers are here, small and tested on
// hostile input. The same walk reads what decoding an image will cost
// (cost.go), so that a file whose decode would take minutes or gigabytes
// is refused before anything decodes it. PDFs are another matter: an
// object graph, not a list of segments, so they are parsed and rewritten
// with pdfcpu (pdf.go).
package media
