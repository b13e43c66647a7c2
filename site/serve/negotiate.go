package serve

import (
	"strings"

	"github.com/guidepub/guidepub/site"
)

// numEncodings is len(site.Encodings).
const numEncodings = 3

// acceptance is the parsed Accept-Encoding header of one request: the
// q-value (in thousandths, 0 to 1000) given to each coding the client named,
// and to "*" and identity.
type acceptance struct {
	present  bool // the header was sent
	codings  [numEncodings]int16
	named    [numEncodings]bool // coding i (site.Encodings order) was named explicitly
	identity int16
	idNamed  bool
	star     int16
	starSet  bool
}

// codingIndex returns the index in site.Encodings of the content coding
// token c (already lower case), or -1.
func codingIndex(c string) int {
	if c == "x-gzip" { // RFC 9110 8.4.1.3: x-gzip is gzip
		c = site.Gzip.Name
	}
	for i, e := range site.Encodings {
		if e.Name == c {
			return i
		}
	}
	return -1
}

// parseAcceptEncoding parses the Accept-Encoding field values (RFC 9110
// 12.5.3). Elements it cannot parse (a bad q-value, a malformed token) are
// ignored, as if the client had not sent them.
func parseAcceptEncoding(values []string) acceptance {
	var a acceptance
	if len(values) == 0 {
		return a
	}
	a.present = true
	for _, v := range values {
		for v != "" {
			var elem string
			elem, v, _ = strings.Cut(v, ",")
			coding, params, _ := strings.Cut(elem, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding == "" {
				continue
			}
			q, ok := parseQ(params)
			if !ok {
				continue
			}
			switch coding {
			case "*":
				a.star, a.starSet = q, true
			case "identity":
				a.identity, a.idNamed = q, true
			default:
				if i := codingIndex(coding); i >= 0 {
					// The first mention counts; a repeated coding is a client bug.
					if !a.named[i] {
						a.codings[i], a.named[i] = q, true
					}
				}
			}
		}
	}
	return a
}

// parseQ returns the q-value of the parameters after a coding, in
// thousandths; 1000 when there is no q parameter. ok is false for a q
// parameter that is not a valid qvalue ("0", "0.5", "1.000", …).
func parseQ(params string) (q int16, ok bool) {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, val, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		return parseQValue(strings.TrimSpace(val))
	}
	return 1000, true
}

// parseQValue parses an RFC 9110 qvalue: "0" or "1" with up to three
// decimals, "1" only followed by zeros.
func parseQValue(s string) (int16, bool) {
	if s == "" || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0] - '0')
	frac := 0
	if len(s) > 1 {
		if s[1] != '.' {
			return 0, false
		}
		digits := s[2:]
		for i := 0; i < 3; i++ {
			frac *= 10
			if i < len(digits) {
				c := digits[i]
				if c < '0' || c > '9' {
					return 0, false
				}
				frac += int(c - '0')
			}
		}
	}
	if whole == 1 && frac != 0 {
		return 0, false
	}
	return int16(whole*1000 + frac), true
}

// codingQ returns the q-value the client gives coding i of site.Encodings.
// A coding neither named nor covered by "*" is not acceptable (q 0).
func (a acceptance) codingQ(i int) int16 {
	if !a.present {
		return 0 // no header: serve identity, as every CDN does
	}
	if a.named[i] {
		return a.codings[i]
	}
	if a.starSet {
		return a.star
	}
	return 0
}

// identityQ returns the q-value of identity: acceptable unless excluded by
// "identity;q=0", or by "*;q=0" without an identity entry (RFC 9110 12.5.3).
// Identity that the client did not name is the fallback: it gets the
// lowest non-zero q, so any acceptable coding beats it.
func (a acceptance) identityQ() int16 {
	switch {
	case a.idNamed:
		return a.identity
	case a.starSet && a.star == 0:
		return 0
	}
	return 1
}

// choose picks the representation to send among the encodings available
// (available[i] for site.Encodings[i]; identity is always available). It
// returns the index of the encoding, -1 for identity, or ok false when the
// client accepts none of them.
//
// The highest q wins; on equal q the order is br, zstd, gzip, identity.
func (a acceptance) choose(available *[numEncodings]bool) (idx int, ok bool) {
	best, bestQ := -1, int16(0)
	for i := range site.Encodings {
		if !available[i] {
			continue
		}
		if q := a.codingQ(i); q > bestQ {
			best, bestQ = i, q
		}
	}
	if q := a.identityQ(); q > bestQ {
		return -1, true
	}
	if best >= 0 {
		return best, true
	}
	return -1, false
}
