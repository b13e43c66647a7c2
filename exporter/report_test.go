package exporter

import (
	"encoding/json"
	"errors"
	"strings"
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

func TestReportAdd(t *testing.T) {
	var r Report
	r.add(GuideResult{Folder: "a", Views: 2, Written: 3, Unchanged: 1, Bytes: 2048})
	r.add(GuideResult{Folder: "b", Err: &bundle.Error{Folder: "b"}})
	r.add(GuideResult{Folder: "c", Deleted: 4, Err: json.Unmarshal([]byte("{"), new(any))})
	if r.Views != 2 || r.Written != 3 || r.Unchanged != 1 || r.Deleted != 4 || r.Rejected != 1 || r.Bytes != 2048 || len(r.Guides) != 3 {
		t.Errorf("report %+v", r)
	}
	if s := r.Summary(); !strings.Contains(s, "1 rejected, 1 failed") || !strings.Contains(s, "2.0 KiB") {
		t.Errorf("summary %q", s)
	}
}
