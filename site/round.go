package site

import (
	"math"
	"strconv"
	"strings"
)

// Conversion factors from the View API's units (see docs/documents.md#units):
// the autofill document and the view pages convert with these.
const (
	MM2PerSqFoot  = 92903.04
	MM2PerSqMeter = 1e6
	MMPerFoot     = 304.8
	MMPerMeter    = 1000
)

// Round2 rounds x half away from zero to 2 decimals. It works on the
// shortest decimal representation of x, so a value printed as 1.005 rounds
// to 1.01 (math.Round(x*100)/100 gives 1 because 1.005 is stored as
// 1.00499999...). NaN and infinities are returned unchanged. The autofill
// document and the view pages both round with it.
func Round2(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) <= 2 {
		return x
	}
	digits := []byte(intPart + frac[:2])
	if frac[2] >= '5' {
		// Add one unit in the last kept place, carrying leftwards.
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		}
	}
	n := len(digits)
	out := string(digits[:n-2]) + "." + string(digits[n-2:])
	if neg {
		out = "-" + out
	}
	v, err := strconv.ParseFloat(out, 64)
	if err != nil { // cannot happen: out is a plain decimal
		return x
	}
	if v == 0 {
		return 0 // no negative zero in the output
	}
	return v
}
