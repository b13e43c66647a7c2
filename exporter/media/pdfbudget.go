package media

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zlib"
)

// What reading a PDF costs is not in its size alone: pdfcpu decodes every
// object stream (the objects of a document packed and compressed
// together) and cross-reference stream whole and keeps them, so a 1.8 MB
// file of sixty object streams that each inflate to 30 MiB took 4.4 GB.
// pdfCost finds those streams in the file's bytes and inflates each into
// nothing, counting, before anything parses the document; it stops as
// soon as the total is over the budget, so the check itself costs no
// memory and at most the budget's worth of inflating.

// The estimate's factors, from the peak resident memory BenchmarkPDF
// measures over the bytes of each part (docs/robustness.md).
const (
	// pdfBytesPerByte: pdfcpu holds the file, every stream's bytes and
	// the objects, and the rebuild its output.
	pdfBytesPerByte = 9
	// pdfBytesPerPacked: an object stream's decoded bytes are kept, and
	// each object in it copied and parsed when the rebuild reaches it:
	// 3.6 measured (48 MiB decoded, 172 MB peak RSS).
	pdfBytesPerPacked = 5
	// pdfBytesPerXRef: a cross-reference stream's entry of a few bytes
	// becomes an entry of pdfcpu's table.
	pdfBytesPerXRef = 24
)

// pdfXRefBytes bounds what a PDF's cross-reference streams decompress to
// together (a real one: a few bytes per object).
const pdfXRefBytes = 64 << 20

// pdfLookback is how far before a stream's keyword its dictionary is
// looked for: a packed stream's dictionary is a few entries long.
const pdfLookback = 64 << 10

// pdfScanChunk is how much of the file is read at once.
const pdfScanChunk = 1 << 20

var (
	pdfStreamKeyword = []byte("stream")
	pdfPackedDict    = regexp.MustCompile(`(?s)^obj\s*<<(.*)>>\s*$`)
	pdfPackedType    = regexp.MustCompile(`/Type\s*/(ObjStm|XRef)\b`)
	pdfFilter        = regexp.MustCompile(`/Filter\s*(\[[^\]]*\]|/[A-Za-z0-9]+)`)
	pdfLength        = regexp.MustCompile(`/Length\s+(\d+)(\s+\d+\s+R)?`)
)

// pdfCost returns what rebuilding the PDF r of size bytes costs
// (DecodeCost.Bytes). It stops reading once the cost is over budget
// (the cost returned is then over it too), and returns an error when a
// packed stream is encoded with a filter other than FlateDecode, one
// stream decodes to more than pdfStreamBytes, or the cross-reference
// streams to more than pdfXRefBytes together: pdfcpu decodes those with
// limits of its own, or none.
func pdfCost(r io.ReaderAt, size, budget int64) (DecodeCost, error) {
	cost := DecodeCost{Bytes: pdfBytesPerByte*size + decodeBase}
	var packed, xref int64
	buf := make([]byte, min(int64(pdfLookback+pdfScanChunk+len(pdfStreamKeyword)+2), size))
	for chunk := int64(0); chunk < size && cost.Bytes <= budget; chunk += pdfScanChunk {
		from := max(0, chunk-pdfLookback)
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-from)], from)
		if err != nil && !errors.Is(err, io.EOF) {
			return cost, err
		}
		window := buf[:n]
		for i := chunk - from; i < min(chunk-from+pdfScanChunk, int64(n)); {
			j := bytes.Index(window[i:], pdfStreamKeyword)
			if j < 0 {
				break
			}
			at := i + int64(j)
			i = at + 1
			if at >= chunk-from+pdfScanChunk {
				break // the next chunk's
			}
			kind, dict, body := packedStream(window, at)
			if kind == "" {
				continue
			}
			n, err := inflated(r, from+body, size, dict)
			if err != nil {
				return cost, fmt.Errorf("a PDF document whose %s %v", packedName(kind), err)
			}
			if kind == "XRef" {
				if xref += n; xref > pdfXRefBytes {
					return cost, fmt.Errorf("a PDF document whose cross-reference streams decompress to more than %d MiB", pdfXRefBytes>>20)
				}
			} else {
				packed += n
			}
			cost.Bytes = pdfBytesPerByte*size + pdfBytesPerPacked*packed + pdfBytesPerXRef*xref + decodeBase
			if cost.Bytes > budget {
				break
			}
		}
	}
	cost.Shape = fmt.Sprintf("%.1f MiB", float64(size)/(1<<20))
	if packed > 0 {
		cost.Shape += fmt.Sprintf(", object streams of %.1f MiB decoded", float64(packed)/(1<<20))
	}
	if cost.Bytes > budget {
		cost.Shape += " or more"
	}
	return cost, nil
}

// packedStream reports whether the keyword "stream" at window[at:]
// starts the data of an object stream ("ObjStm") or a cross-reference
// stream ("XRef"), with its dictionary and where its data starts in
// window.
func packedStream(window []byte, at int64) (kind, dict string, body int64) {
	end := at + int64(len(pdfStreamKeyword))
	switch {
	case at >= 3 && string(window[at-3:at]) == "end":
		return "", "", 0
	case end < int64(len(window)) && window[end] == '\n':
		body = end + 1
	case end+1 < int64(len(window)) && window[end] == '\r' && window[end+1] == '\n':
		body = end + 2
	default:
		return "", "", 0
	}
	before := window[max(0, at-pdfLookback):at]
	o := bytes.LastIndex(before, []byte("obj"))
	if o < 0 {
		return "", "", 0
	}
	m := pdfPackedDict.FindSubmatch(before[o:])
	if m == nil {
		return "", "", 0
	}
	t := pdfPackedType.FindSubmatch(m[1])
	if t == nil {
		return "", "", 0
	}
	return string(t[1]), string(m[1]), body
}

func packedName(kind string) string {
	if kind == "XRef" {
		return "cross-reference stream"
	}
	return "object stream"
}

// inflated returns how many bytes the stream whose data starts at off
// decodes to: its length when it is not compressed, what it inflates to
// when it is FlateDecode.
func inflated(r io.ReaderAt, off, size int64, dict string) (int64, error) {
	if f := pdfFilter.FindStringSubmatch(dict); f != nil {
		if strings.Trim(f[1], "[] \r\n\t") != "/FlateDecode" {
			return 0, fmt.Errorf("is encoded with %s; only FlateDecode is read", f[1])
		}
	} else {
		if l := pdfLength.FindStringSubmatch(dict); l != nil && l[2] == "" {
			n, _ := strconv.ParseInt(l[1], 10, 64)
			return min(n, size), nil
		}
		return 0, nil // its length is an object of its own: what the file holds
	}
	zr, err := zlib.NewReader(io.NewSectionReader(r, off, size-off))
	if err != nil {
		return 0, nil // broken: pdfcpu says so
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, pdfStreamBytes+1))
	if n > pdfStreamBytes {
		return n, fmt.Errorf("decompresses to more than %d MiB", pdfStreamBytes>>20)
	}
	return n, nil
}
