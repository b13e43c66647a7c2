package viewpage

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
	"golang.org/x/text/number"

	"github.com/guidepub/guidepub/site"
)

// The interface text of the pages is a message catalogue: one file per
// language under locales/, a flat JSON object from message id to text in
// the fmt syntax of golang.org/x/text/message (positional arguments such
// as %[2]s where a language orders them differently). en.json is the
// source; every other file must have exactly its ids (TestCatalogue).
// Numbers go through the language's printer, so 2139 prints "2,139" in
// English and "2 139" in French.
//
//go:embed locales/*.json
var localeFiles embed.FS

// PageLanguages are the languages pages are rendered in: the languages a
// guide's documents may have (site.Languages), each with a catalogue.
var PageLanguages = site.Languages

// DefaultLanguage is the page language of a guide that names none and has
// no documents in English.
const DefaultLanguage = "en"

// messages holds every catalogue, keyed by language.
var messages = func() *catalog.Builder {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	for _, lang := range PageLanguages {
		for id, text := range readLocale(lang) {
			if err := b.SetString(language.Make(lang), id, text); err != nil {
				panic(fmt.Sprintf("viewpage: locales/%s.json: %s: %v", lang, id, err))
			}
		}
	}
	return b
}()

// readLocale returns the messages of locales/<lang>.json. A missing or
// broken file is a programming error the tests catch.
func readLocale(lang string) map[string]string {
	raw, err := localeFiles.ReadFile("locales/" + lang + ".json")
	if err != nil {
		panic("viewpage: no catalogue for " + lang)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		panic("viewpage: locales/" + lang + ".json: " + err.Error())
	}
	return m
}

// printer formats the text and numbers of one language.
type printer struct {
	lang string
	p    *message.Printer
}

func newPrinter(lang string) printer {
	if !slices.Contains(PageLanguages, lang) {
		lang = DefaultLanguage
	}
	return printer{lang: lang, p: message.NewPrinter(language.Make(lang), message.Catalog(messages))}
}

// Lang returns the printer's language.
func (p printer) Lang() string { return p.lang }

// messageIDs are the ids of the catalogue (every language has the ids of
// en.json, TestCatalogue checks it).
var messageIDs = func() map[string]bool {
	ids := make(map[string]bool)
	for id := range readLocale("en") {
		ids[id] = true
	}
	return ids
}()

// T returns the message id in the printer's language, formatted with args.
// Only the catalogue's text is a format: an id that is not in it (one
// built from bundle text, such as "type."+a room type) is returned as it
// is, never read as a format string (golang.org/x/text/message would
// format the id itself, "%s" giving "%!s(MISSING)").
func (p printer) T(id string, args ...any) string {
	s, _ := p.message(id, args...)
	return s
}

// message is T, and whether id is in the catalogue.
func (p printer) message(id string, args ...any) (string, bool) {
	if !messageIDs[id] {
		return id, false
	}
	return p.p.Sprintf(id, args...), true
}

// LanguageName returns the name of language lang in that language ("français"),
// for the language switch and the PDF labels.
func LanguageName(lang string) string {
	t := language.Make(lang)
	n := display.Self.Name(t)
	if n == "" {
		return lang
	}
	// Capitalise as a label (display gives "français", "español"); Chinese
	// has no case.
	r := []rune(n)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// whole formats x rounded half away from zero to an integer, with the
// language's digit grouping.
func (p printer) whole(x float64) string {
	return p.p.Sprint(number.Decimal(math.Round(x), number.Scale(0)))
}

// fixed2 formats x with exactly 2 decimals in the language's notation.
func (p printer) fixed2(x float64) string {
	return p.p.Sprint(number.Decimal(x, number.Scale(2)))
}

// Areas and lengths: the values come in mm² and mm (the summary's units).
// Imperial areas are whole square feet and lengths feet and inches to
// the nearest inch; metric areas and lengths keep the autofill document's
// two decimals (site.Round2, the autofill document's rule), in the language's notation.

// area formats mm2 in units.
func (p printer) area(mm2 float64, units string) string {
	if units == Imperial {
		return p.whole(mm2/site.MM2PerSqFoot) + nbsp + p.T("sqft")
	}
	return p.fixed2(site.Round2(mm2/site.MM2PerSqMeter)) + nbsp + "m²"
}

// length formats mm in units.
func (p printer) length(mm float64, units string) string {
	if units == Imperial {
		return FeetInches(mm)
	}
	return p.fixed2(site.Round2(mm/site.MMPerMeter)) + nbsp + "m"
}

// dims formats a room's width and length in units.
func (p printer) dims(w, l float64, units string) string {
	if units == Imperial {
		return FeetInches(w) + nbsp + "×" + nbsp + FeetInches(l)
	}
	return p.fixed2(site.Round2(w/site.MMPerMeter)) + nbsp + "×" + nbsp + p.fixed2(site.Round2(l/site.MMPerMeter)) + nbsp + "m"
}

// FeetInches formats a length in mm as feet and inches rounded to the
// nearest inch: "14′ 1″", "12′" for whole feet, "6″" under a foot.
func FeetInches(mm float64) string {
	in := int64(math.Round(mm / mmPerInch))
	neg := in < 0
	if neg {
		in = -in
	}
	ft, rest := in/12, in%12
	var s string
	switch {
	case ft == 0:
		s = strconv.FormatInt(rest, 10) + "″"
	case rest == 0:
		s = strconv.FormatInt(ft, 10) + "′"
	default:
		s = strconv.FormatInt(ft, 10) + "′" + nbsp + strconv.FormatInt(rest, 10) + "″"
	}
	if neg {
		s = "-" + s
	}
	return s
}

// mmPerInch is exact: an inch is 25.4 mm.
const mmPerInch = 25.4
