package exporter

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/guidepub/guidepub/exporter/bundle"
	"github.com/guidepub/guidepub/exporter/write"
)

// osEnv is an environment on the operating system's file system.
func osEnv(t *testing.T) *env { return newEnv(t, fsKinds[1]) }

// findPublished returns the path under root of the one file whose slash
// path ends with suffix.
func findPublished(t testing.TB, root, suffix string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(filepath.ToSlash(p), suffix) {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no published file ends with %s under %s", suffix, root)
	}
	return found
}

// exportAllocs exports folder of ev with a sparse media file of size bytes
// and returns the bytes allocated by the export.
func exportAllocs(t testing.TB, ev *env, size int64) uint64 {
	t.Helper()
	src := filepath.Join(ev.srcDir, "301-king-st-e", "doc", "gallery.zip")
	writeZip(t, src, size, 0)
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	size = fi.Size()
	e, err := New(ev.cfg)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := e.ExportBundle(context.Background(), "301-king-st-e"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	fi, err = os.Stat(findPublished(t, ev.privDir, "/en/galleryZip.zip"))
	if err != nil || fi.Size() != size {
		t.Fatalf("published gallery.zip: %v, size %d, want %d", err, fi.Size(), size)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestMediaStreamed checks that exporting a large media file allocates
// about as much as exporting a small one: the copy streams.
func TestMediaStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 192 MiB")
	}
	small := exportAllocs(t, osEnv(t), 1<<20)
	large := exportAllocs(t, osEnv(t), 192<<20)
	t.Logf("allocated %d KiB with 1 MiB media, %d KiB with 192 MiB media", small>>10, large>>10)
	if large > small+8<<20 {
		t.Errorf("exporting 192 MiB media allocated %d MiB more than 1 MiB media; copies must stream", (large-small)>>20)
	}
}

// rewrite overwrites the start of file p in place with other bytes.
func rewrite(t *testing.T, p string, fill byte) {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{fill}, 4096), 0); err != nil {
		t.Error(err)
	}
}

func TestMediaChangedDuringCopy(t *testing.T) {
	tests := []struct {
		name       string
		changes    int // attempts during which the source is rewritten
		wantReject bool
	}{
		{"steady", 0, false},
		{"changed once, copied again", 1, false},
		{"changed twice, rejected", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := osEnv(t)
			src := filepath.Join(ev.srcDir, "301-king-st-e", "doc", "gallery.zip")
			// Large enough for many chunks, so the change lands mid-copy.
			writeZip(t, src, 8*write.CopyBufSize, 'a')
			write.CopyHook = func(rel string, attempt int) {
				if rel == "doc/gallery.zip" && attempt < tt.changes {
					rewrite(t, src, byte('b'+attempt))
				}
			}
			t.Cleanup(func() { write.CopyHook = nil })
			_, err := ev.exporter().ExportBundle(context.Background(), "301-king-st-e")
			var be *bundle.Error
			if tt.wantReject {
				if !errors.As(err, &be) || !strings.Contains(err.Error(), "doc/gallery.zip: changed while being exported") {
					t.Fatalf("err = %v, want a bundle error saying gallery.zip changed", err)
				}
				noTempFiles(t, ev.out, ev.privDir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(src)
			got, err := os.ReadFile(findPublished(t, ev.privDir, "/en/galleryZip.zip"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("published gallery.zip differs from the source (%s)", describeMix(got))
			}
		})
	}
}

// describeMix says which bytes a published file is made of.
func describeMix(data []byte) string {
	counts := map[byte]int{}
	for _, c := range data {
		counts[c]++
	}
	return fmt.Sprint(counts)
}

// BenchmarkMediaCopy exports a guide whose gallery.zip is 100 MB or 1 GB
// (sparse) and reports the bytes allocated and the peak heap in use: they
// must not grow with the size.
func BenchmarkMediaCopy(b *testing.B) {
	for _, size := range []int64{100e6, 1e9} {
		b.Run(fmt.Sprintf("%dMB", size/1e6), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ev := newBenchEnv(b)
				runtime.GC()
				peak := sampleHeap()
				b.StartTimer()
				alloc := exportAllocs(b, ev, size)
				b.StopTimer()
				b.ReportMetric(float64(alloc)/(1<<20), "MiB-alloc/op")
				b.ReportMetric(float64(peak())/(1<<20), "MiB-peak-heap")
				b.StartTimer()
			}
		})
	}
}

// newBenchEnv is newEnv on the operating system's file system for a
// benchmark.
func newBenchEnv(b *testing.B) *env {
	root := b.TempDir()
	ev := &env{srcDir: filepath.Join(root, "src"), outDir: filepath.Join(root, "out"), privDir: filepath.Join(root, "private"), now: testNow}
	osfs := afero.NewOsFs()
	ev.src, ev.out = osfs, osfs
	copyFixtures(b, osfs, ev.srcDir)
	ev.cfg = testConfig(osfs, ev.srcDir, ev.outDir, ev.privDir)
	ev.cfg.Jobs = 2
	return ev
}

// writeZip writes at p a ZIP archive holding one stored entry of size
// bytes of fill: a real archive, so that the bundle loads. Zero bytes are
// skipped rather than written, so a large archive of zeros is sparse.
func writeZip(t testing.TB, p string, size int64, fill byte) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	crc := crc32.NewIEEE()
	for left := size; left > 0; left -= int64(len(chunk)) {
		crc.Write(chunk[:min(left, int64(len(chunk)))])
	}
	zw := zip.NewWriter(sparseWriter{f})
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "data.bin", Method: zip.Store, CRC32: crc.Sum32(),
		CompressedSize64: uint64(size), UncompressedSize64: uint64(size)})
	if err != nil {
		t.Fatal(err)
	}
	for left := size; left > 0; left -= int64(len(chunk)) {
		if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// sparseWriter writes to a file, seeking over buffers of zeros.
type sparseWriter struct{ f *os.File }

func (s sparseWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && p[0] == 0 && bytes.Count(p, []byte{0}) == len(p) {
		if _, err := s.f.Seek(int64(len(p)), io.SeekCurrent); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return s.f.Write(p)
}
