package exporter

import (
	"errors"
	"testing"
	"time"

	"github.com/guidepub/guidepub/exporter/bundle"
)

func TestReportSummary(t *testing.T) {
	r := &Report{Duration: 1500 * time.Millisecond}
	r.add(GuideResult{Folder: "a", Views: 2, Written: 10, Bytes: 3 << 20})
	r.add(GuideResult{Folder: "b", Deleted: 4})
	r.add(GuideResult{Folder: "c", Err: &bundle.Error{Folder: "c"}})
	r.add(GuideResult{Folder: "d", Err: errors.New("disk full")})
	want := "exported 1 guides, 2 views: 10 files written, 0 unchanged, 4 deleted; 1 guides removed, 1 rejected, 1 failed; 3.0 MiB written in 1.50s"
	if got := r.Summary(); got != want {
		t.Errorf("Summary:\n got %s\nwant %s", got, want)
	}
}
