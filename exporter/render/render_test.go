package render

import (
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/site"
)

func TestUnitConversion(t *testing.T) {
	sqft := 92903.04
	mm := 304.8
	tests := []struct {
		name    string
		country string
		units   string
		want    string
		area    float64
		length  float64
	}{
		{"US default", "US", "", site.SquareFeet, 1, 1},
		{"CA default", "CA", "", site.SquareMeters, 0.09, 0.3},
		{"explicit metric", "US", bundle.UnitsMetric, site.SquareMeters, 0.09, 0.3},
		{"explicit imperial", "CA", bundle.UnitsImperial, site.SquareFeet, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &bundle.Guide{Property: site.Property{Country: tc.country}}
			m := newMeasurer(g, &bundle.View{Units: tc.units}, "Src")
			a, units, src := m.area(&sqft)
			if *a != tc.area || units != tc.want || src != "Src" {
				t.Errorf("area: %v %s %s", *a, units, src)
			}
			l, _, _ := m.length(&mm)
			if *l != tc.length {
				t.Errorf("length: %v, want %v", *l, tc.length)
			}
		})
	}
	hidden := newMeasurer(&bundle.Guide{}, &bundle.View{Hidden: []string{bundle.HideMeasurements}}, "Src")
	if a, u, s := hidden.area(&sqft); a != nil || u != "" || s != "" {
		t.Error("measure present with measurements hidden")
	}
}

func TestViewStatus(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	drafted := &bundle.Guide{Summary: &site.Summary{}}
	tests := []struct {
		name string
		g    *bundle.Guide
		v    bundle.View
		want string
	}{
		{"ready", drafted, bundle.View{}, site.StatusReady},
		{"not drafted", &bundle.Guide{}, bundle.View{}, site.StatusNotReady},
		{"locked", drafted, bundle.View{Locked: true}, site.StatusLocked},
		{"locked beats not drafted", &bundle.Guide{}, bundle.View{Locked: true}, site.StatusLocked},
		{"expired", drafted, bundle.View{ExpiresAt: &past}, site.StatusLocked},
		{"expires now", drafted, bundle.View{ExpiresAt: &now}, site.StatusLocked},
		{"expires later", drafted, bundle.View{ExpiresAt: &future}, site.StatusReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ViewStatus(tc.g, &tc.v, now); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
