package exporter

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/config"
)

// TestDefaultConfig checks that DefaultConfig carries every default and,
// given the trees, is valid.
func TestDefaultConfig(t *testing.T) {
	d := DefaultConfig()
	if d.ViewURL != DefaultViewURL || d.UnbrandedURL != DefaultUnbrandedURL || d.EmbedURL != DefaultEmbedURL ||
		d.BaseURL != DefaultBaseURL || d.SourceName != DefaultSourceName {
		t.Errorf("URLs and source name: %+v", d)
	}
	if !slices.Equal(d.Encodings, site.Encodings) || d.Jobs != runtime.NumCPU() || d.Clock == nil {
		t.Errorf("Encodings %v, Jobs %d, Clock %v", d.Encodings, d.Jobs, d.Clock)
	}
	d.Encodings[0] = site.Gzip
	if site.Encodings[0] == site.Gzip {
		t.Error("changing DefaultConfig's Encodings changed site.Encodings")
	}
	if err := testConfig(afero.NewMemMapFs(), "/src", "/out", "/private").Validate(); err != nil {
		t.Errorf("DefaultConfig with trees: %v", err)
	}
}

// TestConfigValidate checks that Validate refuses each field that cannot
// work, naming it, and that New refuses the same.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
	}{
		{"no source", func(c *Config) { c.Src = nil }, "Src"},
		{"no public tree", func(c *Config) { c.Out = nil }, "Out"},
		{"no private tree", func(c *Config) { c.Private = nil }, "Private"},
		{"empty view URL", func(c *Config) { c.ViewURL = "" }, "ViewURL"},
		{"empty unbranded URL", func(c *Config) { c.UnbrandedURL = "" }, "UnbrandedURL"},
		{"empty embed URL", func(c *Config) { c.EmbedURL = "" }, "EmbedURL"},
		{"empty base URL", func(c *Config) { c.BaseURL = "" }, "BaseURL"},
		{"empty source name", func(c *Config) { c.SourceName = "" }, "SourceName"},
		{"unknown encoding", func(c *Config) { c.Encodings = []site.Encoding{site.Gzip, {Name: "lzma", Ext: ".xz"}} }, "Encodings"},
		{"zero jobs", func(c *Config) { c.Jobs = 0 }, "Jobs"},
		{"negative jobs", func(c *Config) { c.Jobs = -1 }, "Jobs"},
		{"no clock", func(c *Config) { c.Clock = nil }, "Clock"},
		{"negative shards", func(c *Config) { c.Shards = -2 }, "Shards"},
		{"shard without shards", func(c *Config) { c.Shard = 1 }, "Shard"},
		{"shard too high", func(c *Config) { c.Shard, c.Shards = 4, 4 }, "Shard"},
		{"negative shard", func(c *Config) { c.Shard, c.Shards = -1, 4 }, "Shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(afero.NewMemMapFs(), "/src", "/out", "/private")
			tc.change(&cfg)
			fields := config.Fields(cfg.Validate())
			if len(fields) != 1 || fields[0].Field != tc.field {
				t.Fatalf("Validate: %v, want one problem of %s", fields, tc.field)
			}
			_, err := New(cfg)
			if fields := config.Fields(err); len(fields) != 1 || fields[0].Field != tc.field {
				t.Errorf("New: %v, want the problem of %s", err, tc.field)
			}
		})
	}
}

// TestNewUsesConfigAsGiven checks that New reads a zero field as zero:
// zero jobs are refused rather than read as one per CPU, and no encodings
// (nil) writes identity documents only rather than every encoding.
func TestNewUsesConfigAsGiven(t *testing.T) {
	ev := newEnv(t, fsKinds[0])
	ev.cfg.Jobs = 0
	if _, err := New(ev.cfg); err == nil || !strings.Contains(err.Error(), "Jobs") {
		t.Errorf("Jobs 0: New returned %v, want the Jobs problem", err)
	}
	ev.cfg.Jobs = 2
	ev.cfg.Encodings = nil
	ev.exportAll()
	docs := 0
	for name := range snapshot(t, ev.out, ev.outDir) {
		for _, enc := range site.Encodings {
			if strings.HasSuffix(name, enc.Ext) {
				t.Errorf("%s written without encodings", name)
			}
		}
		if site.IsDocument(name) {
			docs++
		}
	}
	if docs == 0 {
		t.Error("no document written")
	}
}
