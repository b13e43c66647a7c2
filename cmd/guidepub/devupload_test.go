package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevBannerUploadState: the banner's upload step matches the state of
// the source folder. Before the example is uploaded it gives the copy; once
// the example is in the source folder (a second make run), it says so and
// gives the commands that upload it again, never the bare copy, which
// would nest the folder inside the one there.
func TestDevBannerUploadState(t *testing.T) {
	work := t.TempDir()
	if _, err := seedSamples(work, "http://127.0.0.1:8080"+devReceiverPath); err != nil {
		t.Fatal(err)
	}
	b := devBanner{base: "http://127.0.0.1:8080", work: work, src: filepath.Join(work, devSrcDir),
		examples: filepath.Join(work, devExamplesDir), samples: true}
	if b.example = readExample(b.examples); b.example == nil {
		t.Fatal("no example bundle")
	}
	from, to := filepath.Join(b.examples, devExample), filepath.Join(b.src, devExample)
	copyCmd := fmt.Sprintf("cp -r %s %s/", from, b.src)
	upload := func() string {
		var sb strings.Builder
		b.writeUpload(func(format string, a ...any) { fmt.Fprintf(&sb, format+"\n", a...) })
		return sb.String()
	}

	before := upload()
	if !strings.Contains(before, "\n  "+copyCmd+"\n") || !strings.Contains(before, "before it, these answer 404") {
		t.Errorf("before the upload, the banner does not give the copy:\n%s", before)
	}
	if strings.Contains(before, "rm -r") {
		t.Errorf("before the upload, the banner deletes the example:\n%s", before)
	}

	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	after := upload()
	if strings.Contains(after, "answer 404)") || strings.Contains(after, "\n  "+copyCmd+"\n") {
		t.Errorf("with the example uploaded, the banner still says to copy it (into itself) or that it answers 404:\n%s", after)
	}
	rm := strings.Index(after, "rm -r "+to+"\n")
	cp := strings.Index(after, "    "+copyCmd+"\n")
	if !strings.Contains(after, "uploaded already") || rm < 0 || cp < rm {
		t.Errorf("with the example uploaded, the banner does not say so and how to upload it again (rm -r, then cp -r):\n%s", after)
	}
}
