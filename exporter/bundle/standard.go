package bundle

import (
	"fmt"

	"github.com/guidepub/guidepub/site"
)

// Area fields that apply to one measurement standard only: interior,
// exterior and excluded areas to rms, finished and unfinished areas to
// ansi. A guide giving a field of the other standard is rejected rather
// than published with it or silently trimmed (see docs/robustness.md).
type standardField struct {
	json     string
	standard string
	get      func(b *site.Building, f *site.Floor) *float64 // one of b, f is nil
}

var buildingStandardFields = []standardField{
	{"intAreaAboveGrade", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.IntAreaAboveGrade }},
	{"extAreaAboveGrade", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.ExtAreaAboveGrade }},
	{"intAreaTotal", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.IntAreaTotal }},
	{"extAreaTotal", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.ExtAreaTotal }},
	{"excludedAreaAboveGrade", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.ExcludedAreaAboveGrade }},
	{"excludedAreaTotal", site.StandardRMS, func(b *site.Building, _ *site.Floor) *float64 { return b.ExcludedAreaTotal }},
	{"finishedAreaTotal", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.FinishedAreaTotal }},
	{"unfinishedAreaTotal", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.UnfinishedAreaTotal }},
	{"finishedAreaAboveGrade", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.FinishedAreaAboveGrade }},
	{"unfinishedAreaAboveGrade", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.UnfinishedAreaAboveGrade }},
	{"finishedAreaBelowGrade", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.FinishedAreaBelowGrade }},
	{"unfinishedAreaBelowGrade", site.StandardANSI, func(b *site.Building, _ *site.Floor) *float64 { return b.UnfinishedAreaBelowGrade }},
}

var floorStandardFields = []standardField{
	{"interiorArea", site.StandardRMS, func(_ *site.Building, f *site.Floor) *float64 { return f.InteriorArea }},
	{"exteriorArea", site.StandardRMS, func(_ *site.Building, f *site.Floor) *float64 { return f.ExteriorArea }},
	{"excludedArea", site.StandardRMS, func(_ *site.Building, f *site.Floor) *float64 { return f.ExcludedArea }},
	{"finishedArea", site.StandardANSI, func(_ *site.Building, f *site.Floor) *float64 { return f.FinishedArea }},
	{"unfinishedArea", site.StandardANSI, func(_ *site.Building, f *site.Floor) *float64 { return f.UnfinishedArea }},
}

// standardFields adds a problem for every area field of s that does not
// apply to its measurement standard (an unknown standard is reported
// elsewhere).
func (c *checker) standardFields(s *site.Summary) {
	if s.MeasurementStandard != site.StandardANSI && s.MeasurementStandard != site.StandardRMS {
		return
	}
	check := func(path string, fields []standardField, b *site.Building, f *site.Floor) {
		for _, sf := range fields {
			if sf.standard != s.MeasurementStandard && sf.get(b, f) != nil {
				c.add(path+"."+sf.json, "%s applies only to the %s measurement standard; this guide is %s: leave it out",
					sf.json, sf.standard, s.MeasurementStandard)
			}
		}
	}
	for bi := range s.Buildings {
		b := &s.Buildings[bi]
		bp := fmt.Sprintf("$.summary.buildings[%d]", bi)
		check(bp, buildingStandardFields, b, nil)
		for fi := range b.Floors {
			check(fmt.Sprintf("%s.floors[%d]", bp, fi), floorStandardFields, nil, &b.Floors[fi])
		}
	}
}
