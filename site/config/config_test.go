package config

import (
	"errors"
	"fmt"
	"testing"
)

func TestProblems(t *testing.T) {
	var p Problems
	p.Add(true, "Jobs", "must be at least 1")
	if p.Err() != nil {
		t.Fatalf("no problem, Err = %v", p.Err())
	}
	p.Add(false, "RetryMin", "must be positive, got %s", "0s")
	p.Add(false, "Workers", "must be between 1 and 10000, got %d", 0)
	err := fmt.Errorf("delivery queue: %w", p.Err())
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "RetryMin" {
		t.Fatalf("errors.As found %+v", fe)
	}
	got := Fields(err)
	want := []FieldError{{"RetryMin", "must be positive, got 0s"}, {"Workers", "must be between 1 and 10000, got 0"}}
	if len(got) != len(want) {
		t.Fatalf("Fields = %v, want %v", got, want)
	}
	for i := range want {
		if *got[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, *got[i], want[i])
		}
	}
	if s := got[0].Error(); s != "RetryMin: must be positive, got 0s" {
		t.Errorf("Error() = %q", s)
	}
	if Fields(errors.New("plain")) != nil || Fields(nil) != nil {
		t.Error("Fields found a field in an error without one")
	}
}
