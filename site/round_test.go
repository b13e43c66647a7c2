package site

import (
	"math"
	"testing"
)

func TestRound2(t *testing.T) {
	tests := []struct {
		in, want float64
	}{
		{1.005, 1.01}, // math.Round(x*100)/100 gives 1
		{1.004, 1},
		{2.675, 2.68}, // stored as 2.67499999...
		{-1.005, -1.01},
		{-0.001, 0}, // no negative zero
		{0.125, 0.13},
		{0.995, 1},
		{9.995, 10},
		{99.999, 100},
		{12, 12},
		{12.3, 12.3},
		{1646.7837, 1646.78},
		{1e-7, 0},
		{123456789.125, 123456789.13},
	}
	for _, tc := range tests {
		if got := Round2(tc.in); got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("Round2(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(Round2(math.NaN())) || !math.IsInf(Round2(math.Inf(1)), 1) {
		t.Error("NaN or Inf not returned unchanged")
	}
}
