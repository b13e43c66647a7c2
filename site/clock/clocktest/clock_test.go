package clocktest

import (
	"slices"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/clock"
)

var _ clock.Clock = (*Clock)(nil)
var _ clock.Clock = NowFunc(nil)

func TestAdvanceRunsDueFunctionsInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	var ran []string
	c.AfterFunc(3*time.Second, func() { ran = append(ran, "3s") })
	c.AfterFunc(time.Second, func() { ran = append(ran, "1s") })
	stop := c.AfterFunc(2*time.Second, func() { ran = append(ran, "2s") })
	if !stop() {
		t.Fatal("stop of a pending function reported it had run")
	}
	c.Advance(500 * time.Millisecond)
	if len(ran) != 0 {
		t.Fatalf("ran early: %v", ran)
	}
	c.Advance(3 * time.Second)
	if want := []string{"1s", "3s"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if got := c.Now(); !got.Equal(start.Add(3500 * time.Millisecond)) {
		t.Errorf("Now = %v", got)
	}
	if stop() {
		t.Error("stop after stop reported a pending function")
	}
}

func TestSystemAfterFuncStops(t *testing.T) {
	ran := make(chan struct{}, 1)
	stop := clock.System().AfterFunc(time.Hour, func() { ran <- struct{}{} })
	if !stop() {
		t.Fatal("stop reported the function had run")
	}
	if clock.Or(nil) == nil {
		t.Fatal("Or(nil) is nil")
	}
	c := NewClock(time.Unix(0, 0))
	if clock.Or(c) != clock.Clock(c) {
		t.Error("Or replaced a clock")
	}
}
