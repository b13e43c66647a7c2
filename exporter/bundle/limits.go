package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/exporter/media"
)

// Limits bound what one bundle may hold, so that a hostile or broken
// guide.json cannot make an export run for hours or exhaust memory. Each
// is far above any real guide (see docs/robustness.md); a zero field takes
// its value from DefaultLimits.
type Limits struct {
	Views        int // entries of $.views
	Buildings    int // entries of $.summary.buildings
	Floors       int // floors of all buildings together
	Rooms        int // rooms of all floors together
	WallSegments int // wall segments of all rooms together
	Photos       int // entries of $.media.photos
	Documents    int // files named under $.media.documents, all languages
	Webhooks     int // entries of $.webhooks
	// DocumentBytes bounds the size of one rendered document (summary,
	// autofill...), checked by the exporter.
	DocumentBytes int
	// ImagePixels bounds the pixel count (width × height) of one image,
	// checked from the file's header before anything decodes it.
	ImagePixels int
}

// DefaultLimits are the limits of a zero Limits field.
var DefaultLimits = Limits{
	Views:         20,
	Buildings:     10,
	Floors:        100,
	Rooms:         1000,
	WallSegments:  10000,
	Photos:        500,
	Documents:     200,
	Webhooks:      20,
	DocumentBytes: 8 << 20,
	ImagePixels:   media.DefaultMaxPixels,
}

// WithDefaults returns l with every zero (or negative) field replaced by
// DefaultLimits'.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	d := DefaultLimits
	def(&l.Views, d.Views)
	def(&l.Buildings, d.Buildings)
	def(&l.Floors, d.Floors)
	def(&l.Rooms, d.Rooms)
	def(&l.WallSegments, d.WallSegments)
	def(&l.Photos, d.Photos)
	def(&l.Documents, d.Documents)
	def(&l.Webhooks, d.Webhooks)
	def(&l.DocumentBytes, d.DocumentBytes)
	def(&l.ImagePixels, d.ImagePixels)
	return l
}

// limit is one counted list: the pattern of its JSON path (array indexes
// as "[]"), what it holds, the flag that raises it, and the limit.
type limit struct {
	pattern, what, flag string
	max                 int
}

func (l Limits) counted() []limit {
	return []limit{
		{".views", "views", "--max-views", l.Views},
		{".summary.buildings", "buildings", "--max-buildings", l.Buildings},
		{".summary.buildings[].floors", "floors", "--max-floors", l.Floors},
		{".summary.buildings[].floors[].rooms", "rooms", "--max-rooms", l.Rooms},
		{".summary.buildings[].floors[].rooms[].wallSegments", "wall segments", "--max-wall-segments", l.WallSegments},
		{".media.photos", "photos", "--max-photos", l.Photos},
		{".webhooks", "webhooks", "--max-webhooks", l.Webhooks},
	}
}

// frame is one open JSON array or object of checkLimits' scan.
type frame struct {
	arr       bool
	key       string // object: the current member's key
	expectKey bool   // object: the next token is a key or '}'
	idx       int    // array: elements seen
}

// stackPath returns the JSON path of the value being read in stack: with real
// indexes ("$.views[3]") or as a pattern (".views[]", no "$").
func stackPath(stack []frame, pattern bool) string {
	var b strings.Builder
	if !pattern {
		b.WriteString("$")
	}
	for _, f := range stack {
		switch {
		case f.arr && pattern:
			b.WriteString("[]")
		case f.arr:
			b.WriteString("[" + strconv.Itoa(f.idx-1) + "]")
		default:
			b.WriteString(keyPath(f.key))
		}
	}
	return b.String()
}

// CheckLimits scans guide.json text before it is decoded and returns a
// problem for the first list that holds more than lim allows (lim's zero
// fields are DefaultLimits'), or nil. It stops at the first limit
// exceeded, so a huge guide is rejected after reading only what the limit
// allows. Text that is not valid JSON gives nil: Parse reports it.
func CheckLimits(data []byte, lim Limits) []Problem {
	lim = lim.WithDefaults()
	counted := lim.counted()
	counts := make([]int, len(counted))
	docs := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	afterValue := func() {
		if n := len(stack); n > 0 && !stack[n-1].arr {
			stack[n-1].expectKey = true
		}
	}
	over := func(what, flag string, max int, at string) []Problem {
		return []Problem{{Path: at, Message: fmt.Sprintf("the guide holds more than %d %s, the limit for one bundle (raise it with %s)", max, what, flag)}}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // not JSON: Parse says why
		}
		n := len(stack)
		if n > 0 && !stack[n-1].arr && stack[n-1].expectKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				afterValue()
				continue
			}
			key, _ := tok.(string)
			stack[n-1].key, stack[n-1].expectKey = key, false
			continue
		}
		if tok == json.Delim(']') {
			stack = stack[:n-1]
			afterValue()
			continue
		}
		// tok starts a value.
		if n > 0 && stack[n-1].arr {
			stack[n-1].idx++
			pat := stackPath(stack[:n-1], true)
			for i, l := range counted {
				if pat == l.pattern {
					if counts[i]++; counts[i] > l.max {
						return over(l.what, l.flag, l.max, stackPath(stack, false))
					}
				}
			}
			if isDocumentList(pat) {
				if docs++; docs > lim.Documents {
					return over("document files", "--max-documents", lim.Documents, stackPath(stack, false))
				}
			}
		} else if s, ok := tok.(string); ok && s != "" && n == 4 && isDocumentsValue(stack) {
			if docs++; docs > lim.Documents {
				return over("document files", "--max-documents", lim.Documents, stackPath(stack, false))
			}
		}
		switch tok {
		case json.Delim('['):
			stack = append(stack, frame{arr: true})
		case json.Delim('{'):
			stack = append(stack, frame{expectKey: true})
		default:
			afterValue()
		}
	}
}

// isDocumentList reports whether pattern is a list of files of one
// language's documents (jpgMetric, jpgImperial).
func isDocumentList(pattern string) bool {
	rest, ok := strings.CutPrefix(pattern, ".media.documents")
	return ok && (strings.HasSuffix(rest, ".jpgMetric") || strings.HasSuffix(rest, ".jpgImperial")) &&
		strings.Count(rest, ".") == 2
}

// isDocumentsValue reports whether the string being read (stack four
// objects deep) is a member of one language's documents.
func isDocumentsValue(stack []frame) bool {
	return !stack[0].arr && stack[0].key == "media" && !stack[1].arr && stack[1].key == "documents" &&
		!stack[2].arr && !stack[3].arr
}
