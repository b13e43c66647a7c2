package watch

import (
	"runtime"
	"testing"
	"time"

	"github.com/guidepub/guidepub/site/config"
)

// TestDefaultConfig checks that DefaultConfig carries every default and,
// given Dir and Handler, is valid.
func TestDefaultConfig(t *testing.T) {
	d := DefaultConfig()
	if d.Debounce != DefaultDebounce || d.MaxWait != DefaultMaxWait || d.FallbackPoll != DefaultPoll || d.Poll != 0 {
		t.Errorf("durations: %+v", d)
	}
	if d.Jobs != runtime.GOMAXPROCS(0) || d.Clock == nil || d.Logger == nil {
		t.Errorf("Jobs %d, Clock %v, Logger %v", d.Jobs, d.Clock, d.Logger)
	}
	if err := testConfig(t.TempDir(), newRecorder(), nil).Validate(); err != nil {
		t.Errorf("DefaultConfig with Dir and Handler: %v", err)
	}
}

// TestConfigValidate checks that Validate refuses each field that cannot
// work, naming it, and that New refuses the same instead of reading a zero
// as a default.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
	}{
		{"no dir", func(c *Config) { c.Dir = "" }, "Dir"},
		{"no handler", func(c *Config) { c.Handler = nil }, "Handler"},
		{"zero debounce", func(c *Config) { c.Debounce = 0 }, "Debounce"},
		{"negative debounce", func(c *Config) { c.Debounce = -time.Second }, "Debounce"},
		{"zero max wait", func(c *Config) { c.MaxWait = 0 }, "MaxWait"},
		{"max wait below debounce", func(c *Config) { c.Debounce, c.MaxWait = time.Second, time.Second-1 }, "MaxWait"},
		{"negative poll", func(c *Config) { c.Poll = -time.Second }, "Poll"},
		{"zero fallback poll", func(c *Config) { c.FallbackPoll = 0 }, "FallbackPoll"},
		{"negative fallback poll", func(c *Config) { c.FallbackPoll = -time.Second }, "FallbackPoll"},
		{"zero jobs", func(c *Config) { c.Jobs = 0 }, "Jobs"},
		{"negative jobs", func(c *Config) { c.Jobs = -1 }, "Jobs"},
		{"no clock", func(c *Config) { c.Clock = nil }, "Clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t.TempDir(), newRecorder(), nil)
			tc.change(&cfg)
			fields := config.Fields(cfg.Validate())
			if len(fields) != 1 || fields[0].Field != tc.field {
				t.Fatalf("Validate: %v, want one problem of %s", fields, tc.field)
			}
			w, err := New(cfg)
			if err == nil {
				w.Close()
			}
			if fields := config.Fields(err); len(fields) != 1 || fields[0].Field != tc.field {
				t.Errorf("New: %v, want the problem of %s", err, tc.field)
			}
		})
	}
}

// TestConfigZeroes checks the zeros that do work: Poll 0 is file system
// events and a nil Logger discards.
func TestConfigZeroes(t *testing.T) {
	cfg := testConfig(t.TempDir(), newRecorder(), nil)
	cfg.Poll = 0
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Mode() != ModeEvents {
		t.Errorf("Poll 0: mode %s, want %s", w.Mode(), ModeEvents)
	}
	if w.log == nil {
		t.Error("nil Logger not replaced by a discarding one")
	}
}
