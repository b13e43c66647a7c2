package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/guidepub/guidepub/exporter/media"
	"github.com/guidepub/guidepub/site"
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
	Phones       int // entries of $.banner.phones
	Emails       int // entries of $.banner.emails
	SocialLinks  int // entries of $.banner.socialLinks
	// DocumentBytes bounds the size of one rendered document (summary,
	// autofill...), checked by the exporter.
	DocumentBytes int
	// ImagePixels bounds the pixel count (width × height) of one image,
	// checked from the file's header before anything decodes it.
	ImagePixels int
	// ImageWork bounds, in millions of pixel passes, the work of decoding
	// one image for its renditions (pixels × scans of a JPEG), read from
	// its headers before anything decodes it.
	ImageWork int
	// DecodeMemory is the memory, in MiB, that the exporter's image
	// decodes and PDF rewrites may take together; a file whose headers
	// say it needs more is refused, the others wait for their share.
	DecodeMemory int
}

// Media returns the limits media.Check applies to one file.
func (l Limits) Media() media.Limits {
	l = l.WithDefaults()
	return media.Limits{Pixels: l.ImagePixels, Work: int64(l.ImageWork) * 1e6, Memory: int64(l.DecodeMemory) << 20}
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
	Phones:        20,
	Emails:        20,
	SocialLinks:   20,
	DocumentBytes: 8 << 20,
	ImagePixels:   media.DefaultMaxPixels,
	ImageWork:     media.DefaultMaxWork / 1e6,
	DecodeMemory:  media.DefaultDecodeMemory >> 20,
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
	def(&l.Phones, d.Phones)
	def(&l.Emails, d.Emails)
	def(&l.SocialLinks, d.SocialLinks)
	def(&l.DocumentBytes, d.DocumentBytes)
	def(&l.ImagePixels, d.ImagePixels)
	def(&l.ImageWork, d.ImageWork)
	def(&l.DecodeMemory, d.DecodeMemory)
	return l
}

// MaxDepth is how deeply arrays and objects may nest in guide.json. The
// deepest value of a guide (a wall segment's measure) is 10 levels deep;
// the limit keeps the checks linear in the size of the file whatever it
// holds.
const MaxDepth = 32

// MaxEntries bounds every other array and object of guide.json: those of
// an unknown field or of a value of the wrong type (all the lists of a
// guide have limits of their own, and its objects a few dozen members),
// so that no part of the file can make the checks hold millions of values.
const MaxEntries = 1000

// limit is one counted list: where it is, what it holds, the flag that
// raises it ("" for a list whose length is bounded by what it may hold:
// addons, hidden features...), and the limit.
type limit struct {
	// pattern is the JSON path of the list: ".key" steps, "[]" for every
	// element of an array, ".*" for every member of an object.
	pattern string
	// strings: the non-empty strings at pattern count, not its elements
	// (or members).
	strings bool
	// perList: max bounds each list at pattern on its own (hidden features
	// of each view), not all of them together.
	perList bool
	what    string // also the counter: limits of one what count together
	flag    string
	max     int
}

func (l Limits) counted() []limit {
	docs := func(pattern string, strings bool) limit {
		return limit{pattern: pattern, strings: strings, what: "document files", flag: "--max-documents", max: l.Documents}
	}
	fixed := func(pattern, what string, max int) limit {
		return limit{pattern: pattern, perList: true, what: what, max: max}
	}
	return []limit{
		{pattern: ".views", what: "views", flag: "--max-views", max: l.Views},
		{pattern: ".summary.buildings", what: "buildings", flag: "--max-buildings", max: l.Buildings},
		{pattern: ".summary.buildings[].floors", what: "floors", flag: "--max-floors", max: l.Floors},
		{pattern: ".summary.buildings[].floors[].rooms", what: "rooms", flag: "--max-rooms", max: l.Rooms},
		{pattern: ".summary.buildings[].floors[].rooms[].wallSegments", what: "wall segments", flag: "--max-wall-segments", max: l.WallSegments},
		{pattern: ".media.photos", what: "photos", flag: "--max-photos", max: l.Photos},
		docs(".media.documents.*.jpgMetric", false),
		docs(".media.documents.*.jpgImperial", false),
		docs(".media.documents.*.*", true),
		docs(".views[].plans.*.jpgMetric", false),
		docs(".views[].plans.*.jpgImperial", false),
		docs(".views[].plans.*.*", true),
		{pattern: ".webhooks", what: "webhooks", flag: "--max-webhooks", max: l.Webhooks},
		{pattern: ".banner.phones", what: "phone numbers", flag: "--max-phones", max: l.Phones},
		{pattern: ".banner.emails", what: "email addresses", flag: "--max-emails", max: l.Emails},
		{pattern: ".banner.socialLinks", what: "social links", flag: "--max-social-links", max: l.SocialLinks},
		// Lists of distinct known values: longer ones are invalid anyway,
		// but each entry would be a problem of its own.
		fixed(".addons", "addons", len(Addons)),
		fixed(".views[].hidden", "hidden features per view", len(HiddenFeatures)),
		fixed(".media.documents", "document languages", len(site.Languages)),
		fixed(".views[].plans", "plan languages per view", len(site.Languages)),
		fixed(".summary.buildings[].floors[].rooms[].dims", "dims per room", 2),
	}
}

// shape is what the limit check knows of one place of guide.json: which
// counted lists are there, and the places below it that hold some.
type shape struct {
	members map[string]*shape // object members by key; "*" for any other key
	elems   *shape            // array elements
	list    *limit            // each element (or member) here counts against list
	strings *limit            // each non-empty string here counts against strings
}

// child returns the shape of the member key of s (an object), or nil.
func (s *shape) member(key string) *shape {
	if s == nil {
		return nil
	}
	if c, ok := s.members[key]; ok {
		return c
	}
	return s.members["*"]
}

// shapes builds the tree of places of lims' patterns.
func shapes(lims []limit) *shape {
	root := &shape{}
	for i := range lims {
		l := &lims[i]
		s := root
		for rest := l.pattern; rest != ""; {
			if r, ok := strings.CutPrefix(rest, "[]"); ok {
				if s.elems == nil {
					s.elems = &shape{}
				}
				s, rest = s.elems, r
				continue
			}
			key := rest[1:]
			if i := strings.IndexAny(key, ".["); i >= 0 {
				key = key[:i]
			}
			rest = rest[1+len(key):]
			if s.members == nil {
				s.members = map[string]*shape{}
			}
			if s.members[key] == nil {
				s.members[key] = &shape{}
			}
			s = s.members[key]
		}
		if l.strings {
			s.strings = l
		} else {
			s.list = l
		}
	}
	return root
}

// frame is one open JSON array or object of checkLimits' scan.
type frame struct {
	arr       bool
	shape     *shape // nil: no counted list at or below it
	key       string // object: the current member's key
	expectKey bool   // object: the next token is a key or '}'
	idx       int    // array: elements seen; object: members seen
}

// stackPath returns the JSON path of the value being read in stack, such
// as "$.views[3]". It is built only to report a problem.
func stackPath(stack []frame) string {
	var b strings.Builder
	b.WriteString("$")
	for _, f := range stack {
		if f.arr {
			b.WriteString("[" + strconv.Itoa(f.idx-1) + "]")
		} else {
			b.WriteString(keyPath(f.key))
		}
	}
	return b.String()
}

// CheckLimits scans guide.json text before it is decoded and returns a
// problem for the first list that holds more than lim allows (lim's zero
// fields are DefaultLimits'), or for values nested more than MaxDepth
// levels deep, or nil. It stops at the first limit exceeded, so a huge
// guide is rejected after reading only what the limit allows; its time
// is linear in the size of data. Text that is not valid JSON gives nil:
// Parse reports it.
func CheckLimits(data []byte, lim Limits) []Problem {
	lim = lim.WithDefaults()
	scan := &limitScan{root: shapes(lim.counted()), counts: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF: all within the limits; otherwise not JSON, and Parse says why
		}
		if p := scan.token(tok); p != nil {
			return p
		}
	}
}

// limitScan is the state of CheckLimits: the open arrays and objects, and
// how many of each counted what it has seen.
type limitScan struct {
	root   *shape
	counts map[string]int // by limit.what
	stack  []frame
}

// token reads the next token of guide.json and returns the problem it
// makes, or nil.
func (s *limitScan) token(tok json.Token) []Problem {
	n := len(s.stack)
	if n > 0 && !s.stack[n-1].arr && s.stack[n-1].expectKey {
		return s.key(tok)
	}
	if tok == json.Delim(']') {
		s.close()
		return nil
	}
	return s.value(tok)
}

// key reads tok where an object's key or its end is expected.
func (s *limitScan) key(tok json.Token) []Problem {
	if tok == json.Delim('}') {
		s.close()
		return nil
	}
	top := &s.stack[len(s.stack)-1]
	top.key, _ = tok.(string)
	top.expectKey = false
	top.idx++
	return s.countEntry(top.shape, top.idx)
}

// value reads tok, which starts a value: a string or another scalar, or
// an array or object that opens.
func (s *limitScan) value(tok json.Token) []Problem {
	sh, p := s.place()
	if p != nil {
		return p
	}
	if str, ok := tok.(string); ok && str != "" && sh != nil {
		if p := s.count(sh.strings, 0); p != nil {
			return p
		}
	}
	switch tok {
	case json.Delim('['), json.Delim('{'):
		if len(s.stack) == MaxDepth {
			return []Problem{{Path: stackPath(s.stack), Message: fmt.Sprintf("arrays and objects nested more than %d levels deep; no guide needs more than 10", MaxDepth)}}
		}
		s.stack = append(s.stack, frame{arr: tok == json.Delim('['), expectKey: tok == json.Delim('{'), shape: sh})
	default:
		s.afterValue()
	}
	return nil
}

// place returns the shape of the value that starts: that of its place in
// its parent. An array's element is counted there.
func (s *limitScan) place() (*shape, []Problem) {
	n := len(s.stack)
	if n == 0 {
		return s.root, nil
	}
	parent := &s.stack[n-1]
	if !parent.arr {
		return parent.shape.member(parent.key), nil
	}
	parent.idx++
	if p := s.countEntry(parent.shape, parent.idx); p != nil {
		return nil, p
	}
	if parent.shape == nil {
		return nil, nil
	}
	return parent.shape.elems, nil
}

// close ends the innermost array or object.
func (s *limitScan) close() {
	s.stack = s.stack[:len(s.stack)-1]
	s.afterValue()
}

// afterValue notes that a value of the innermost object has been read:
// a key or its end comes next.
func (s *limitScan) afterValue() {
	if n := len(s.stack); n > 0 && !s.stack[n-1].arr {
		s.stack[n-1].expectKey = true
	}
}

// count counts one more of l, the seen-th of its list, and returns its
// problem when that is one too many.
func (s *limitScan) count(l *limit, seen int) []Problem {
	if l == nil {
		return nil
	}
	if !l.perList {
		s.counts[l.what]++
		seen = s.counts[l.what]
	}
	if seen <= l.max {
		return nil
	}
	if l.flag == "" {
		// A list of distinct known values: the list is at fault.
		return []Problem{{Path: stackPath(s.stack[:len(s.stack)-1]), Message: fmt.Sprintf("more than %d %s; no guide has more", l.max, l.what)}}
	}
	return []Problem{{Path: stackPath(s.stack), Message: fmt.Sprintf("the guide holds more than %d %s, the limit for one bundle (raise it with %s)", l.max, l.what, l.flag)}}
}

// countEntry counts the seen-th entry of the innermost array or object,
// of shape sh, against its limit or MaxEntries.
func (s *limitScan) countEntry(sh *shape, seen int) []Problem {
	if sh != nil && sh.list != nil {
		return s.count(sh.list, seen)
	}
	if seen > MaxEntries {
		return []Problem{{Path: stackPath(s.stack[:len(s.stack)-1]), Message: fmt.Sprintf("more than %d entries; no guide has that many here", MaxEntries)}}
	}
	return nil
}
