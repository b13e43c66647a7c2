package fswatch

import (
	"slices"
	"testing"
	"time"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestDebouncer(t *testing.T) {
	ms := func(n int) time.Time { return epoch.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name    string
		touches []int // ms after epoch, all for folder "a"
		notDue  int   // ms: nothing due yet
		due     int   // ms: "a" due
	}{
		{"single", []int{0}, 149, 150},
		{"burst extends the quiet period", []int{0, 50, 100, 140}, 289, 290},
		{"trickle is capped by the maximum wait", []int{0, 100, 200, 300, 400, 500, 600}, 499, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDebouncer(150*time.Millisecond, 500*time.Millisecond)
			for _, at := range tt.touches {
				d.Touch("a", ms(at))
			}
			if next, ok := d.Next(); !ok || !next.Equal(ms(tt.due)) {
				t.Errorf("next = %v %v, want %v", next, ok, ms(tt.due))
			}
			if got := d.Due(ms(tt.notDue)); len(got) != 0 {
				t.Errorf("due at %dms = %v, want nothing", tt.notDue, got)
			}
			if got := d.Due(ms(tt.due)); !slices.Equal(got, []string{"a"}) {
				t.Errorf("due at %dms = %v, want [a]", tt.due, got)
			}
			if _, ok := d.Next(); ok {
				t.Error("still pending after due")
			}
		})
	}
	t.Run("folders are independent", func(t *testing.T) {
		d := NewDebouncer(150*time.Millisecond, time.Second)
		d.Touch("b", ms(0))
		d.Touch("a", ms(100))
		d.Touch("c", ms(0))
		if got := d.Due(ms(150)); !slices.Equal(got, []string{"b", "c"}) {
			t.Errorf("due = %v, want [b c]", got)
		}
		if got := d.Due(ms(250)); !slices.Equal(got, []string{"a"}) {
			t.Errorf("due = %v, want [a]", got)
		}
	})
}
