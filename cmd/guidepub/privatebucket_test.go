package main

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/guidepub/guidepub/exporter/publish"
	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/exporter/records"
	"github.com/guidepub/guidepub/fixtures"
	"github.com/guidepub/guidepub/site/bucket"
)

// bucketObjects returns every object of b under prefix (the lease aside):
// its bytes and the metadata guidepub sets.
func bucketObjects(t *testing.T, b *blob.Bucket, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(o.Key, publish.LeaseFile) {
			continue
		}
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		a, err := b.Attributes(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = string(data) + "|" + a.ContentType + "|" + a.ContentEncoding + "|" + a.CacheControl + "|" + a.Metadata[bucket.MetadataHash]
	}
}

// sameObjects reports the keys where two listings differ.
func sameObjects(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the one export's bucket is empty", what)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s differs (present: %v)", what, k, got[k] != "")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s only in the shards' bucket", what, k)
		}
	}
}

// TestShardsPublishDirectly: four "export --shard i/4" with bucket URLs for
// --publish and --private, each on an empty folder of its own, fill both
// buckets as one export does (the private bucket's guides/ byte for byte;
// each shard keeps records of its own); a shard run again on another empty
// folder uploads nothing; a guide removed from the sources is removed
// from both buckets by its shard's next run, again on an empty folder.
func TestShardsPublishDirectly(t *testing.T) {
	st := publishtest.StartStore(t)
	buckets := map[string]*blob.Bucket{}
	for _, name := range []string{"pub-one", "priv-one", "pub-shards", "priv-shards"} {
		buckets[name] = publishtest.NewBucket(t, st.Endpoint, name)
	}
	src := fixtureSrc(t)
	root := t.TempDir()
	export := func(endpoint, pub, priv, work string, extra ...string) string {
		t.Helper()
		args := append([]string{"export", "--src", src, "--publish", s3URL(pub, endpoint), "--private", s3URL(priv, endpoint),
			"--work-dir", filepath.Join(root, work)}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		return stdout
	}
	export(st.Endpoint, "pub-one", "priv-one", "one")
	for i := range 4 {
		export(st.Endpoint, "pub-shards", "priv-shards", "shard"+itoa(i), "--shard", itoa(i)+"/4")
	}
	sameObjects(t, "public", bucketObjects(t, buckets["pub-shards"], ""), bucketObjects(t, buckets["pub-one"], ""))
	sameObjects(t, "private guides/", bucketObjects(t, buckets["priv-shards"], "guides/"), bucketObjects(t, buckets["priv-one"], "guides/"))
	records := 0
	for i := range 4 {
		records += len(bucketObjects(t, buckets["priv-shards"], "exported-"+itoa(i)+"-of-4/"))
	}
	if one := len(bucketObjects(t, buckets["priv-one"], "exported/")); records != one || one == 0 {
		t.Errorf("the shards keep %d records, the one export %d", records, one)
	}

	// Again on empty folders: nothing is uploaded.
	rc := newRequestCounter(t, st.Endpoint)
	for i := range 4 {
		export(rc.URL, "pub-shards", "priv-shards", "again"+itoa(i), "--shard", itoa(i)+"/4")
	}
	if n := rc.puts.Load(); n != 0 {
		t.Errorf("shards run again on empty folders uploaded %d objects, want none", n)
	}

	// publish --private with the bucket: its records come into another
	// empty folder, and the one export's tree is found all there.
	code, stdout, stderr := runCLI(t, "publish", "--from", filepath.Join(root, "one", "public"), "--to", s3URL("pub-one", st.Endpoint),
		"--private", s3URL("priv-one", st.Endpoint), "--work-dir", filepath.Join(root, "publish"), "--dry-run")
	if code != 0 || !strings.Contains(stdout, "0 to upload") || !strings.Contains(stdout, "0 to delete") {
		t.Errorf("publish --private s3://…: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "publish", "publish", "exported")); err != nil {
		t.Errorf("publish took no records from the bucket: %v", err)
	}

	// A guide removed from the sources goes from both buckets.
	des, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	folder := des[0].Name()
	guideID, viewIDs := fixtureIDs(t, filepath.Join(src, folder))
	if err := os.RemoveAll(filepath.Join(src, folder)); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		export(st.Endpoint, "pub-shards", "priv-shards", "removed"+itoa(i), "--shard", itoa(i)+"/4")
	}
	for _, id := range viewIDs {
		if left := bucketObjects(t, buckets["pub-shards"], id+"/"); len(left) > 0 {
			t.Errorf("view %s of the removed guide: %d objects left in the public bucket", id, len(left))
		}
	}
	if left := bucketObjects(t, buckets["priv-shards"], "guides/"+guideID+"/"); len(left) > 0 {
		t.Errorf("removed guide %s: %d objects left in the private bucket", guideID, len(left))
	}
	for i := range 4 {
		if _, err := buckets["priv-shards"].Attributes(context.Background(), "exported-"+itoa(i)+"-of-4/"+guideID+".json"); err == nil {
			t.Errorf("removed guide %s: its record is left in shard %d's records", guideID, i)
		}
	}
}

// fixtureIDs returns the guide id of the bundle in folder and its public
// ids (view ids and alias).
func fixtureIDs(t *testing.T, folder string) (guideID string, public []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(folder, "guide.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		GuideID string `json:"guideId"`
		Alias   string `json:"alias"`
		Views   []struct {
			ViewID string `json:"viewId"`
		} `json:"views"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, v := range g.Views {
		public = append(public, v.ViewID)
	}
	if g.Alias != "" {
		public = append(public, g.Alias)
	}
	return g.GuideID, public
}

// modTimes returns the modification time of every file under dir (a
// file:// bucket), by slash path.
func modTimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fi.ModTime()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWatchPrivateBucket: watch --private file://… mirrors each export's
// private files to the bucket (a new guide's record, event and documents;
// a removed guide's go), and a watcher started again on an empty
// --work-dir carries on from the bucket's records, rewriting no object of
// either bucket.
func TestWatchPrivateBucket(t *testing.T) {
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	pub, priv := t.TempDir(), t.TempDir()
	args := func(work string) []string {
		return []string{"--src", tr.src, "--private", "file://" + priv, "--publish", "file://" + pub,
			"--work-dir", work, "--debounce", "20ms", "--jobs", "1", "--quick=false"}
	}
	inPriv := func(key string) func() bool {
		return func() bool { _, err := os.Stat(filepath.Join(priv, filepath.FromSlash(key))); return err == nil }
	}
	w := startWatch(t, args(filepath.Join(t.TempDir(), "work"))...)
	eventually(t, "the first guide's record in the private bucket", inPriv("exported/gKT301KINGE1.json"))
	for _, key := range []string{"guides/gKT301KINGE1/record.json", "guides/gKT301KINGE1/event.json", "guides/gKT301KINGE1/doc/en/galleryZip.zip"} {
		if !inPriv(key)() {
			t.Errorf("%s is not in the private bucket", key)
		}
	}
	upload(t, tr.src, "ansi-us-house", sampleBundle(t, "ansi-us-house", "https://hooks.example.com/ready"))
	eventually(t, "the new guide's record in the private bucket", inPriv("exported/gUS123MAPLE.json"))
	if err := os.RemoveAll(filepath.Join(tr.src, "301-king-st-e")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the removed guide's record gone", func() bool { return !inPriv("exported/gKT301KINGE1.json")() })
	if inPriv("guides/gKT301KINGE1/event.json")() || inPriv("guides/gKT301KINGE1/doc/en/galleryZip.zip")() {
		t.Error("the removed guide's event or documents are left in the private bucket")
	}
	w.stop(t)

	before := [2]map[string]time.Time{modTimes(t, pub), modTimes(t, priv)}
	w = startWatch(t, args(filepath.Join(t.TempDir(), "empty"))...)
	eventually(t, "the second watcher's first export", func() bool {
		return strings.Contains(w.stderr.String(), "records taken from the bucket") && strings.Contains(w.stdout.String(), "exported")
	})
	time.Sleep(time.Second) // what it would upload, mirrored meanwhile
	w.stop(t)
	for i, now := range [2]map[string]time.Time{modTimes(t, pub), modTimes(t, priv)} {
		for key, at := range now {
			if !before[i][key].Equal(at) && !strings.Contains(key, publish.LeaseFile) {
				t.Errorf("%s rewritten by a watcher that started on an empty folder", key)
			}
		}
	}
}

// TestPrivateBucketOutage: the private bucket refuses the exporter's
// records (the moment a crash could also fall on: documents and events
// are up, records are not). The export says so and fails; the next one,
// on the same folder, finds the records it kept that the bucket lacks and
// mirrors those guides, though nothing in their bundles changed.
func TestPrivateBucketOutage(t *testing.T) {
	st := publishtest.StartStore(t)
	b := publishtest.NewBucket(t, st.Endpoint, "priv")
	target, _ := url.Parse(st.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/exported/") {
			http.Error(w, "<Error><Code>AccessDenied</Code></Error>", http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer refusing.Close()
	src, work := fixtureSrc(t), t.TempDir()
	code, _, stderr := runCLI(t, "export", "--src", src, "--out", filepath.Join(work, "out"), "--private", s3URL("priv", refusing.URL), "--work-dir", work)
	if code == 0 || !strings.Contains(stderr, "private tree not all in") {
		t.Fatalf("export with records refused: exit %d\n%s", code, stderr)
	}
	if n := len(bucketObjects(t, b, "exported/")); n != 0 {
		t.Fatalf("%d records in the bucket that refused them", n)
	}
	if n := len(bucketObjects(t, b, "guides/")); n == 0 {
		t.Fatal("nothing of the guides reached the bucket before the records")
	}
	code, stdout, stderr := runCLI(t, "export", "--src", src, "--out", filepath.Join(work, "out"), "--private", s3URL("priv", st.Endpoint), "--work-dir", work)
	if code != 0 {
		t.Fatalf("export once the bucket takes records: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "0 files written") {
		t.Errorf("the second export wrote files: %s", stdout)
	}
	if n := len(bucketObjects(t, b, "exported/")); n != 4 {
		t.Errorf("%d records in the bucket, want the 4 fixtures'", n)
	}
}

// sameAsCache reports the differences between the private tree's cache
// (its guides/ and records) and a file:// private bucket.
func sameAsCache(t *testing.T, cache, bucketDir string) []string {
	t.Helper()
	files := func(root string, keep func(rel string) bool) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if keep(rel) {
				data, _ := os.ReadFile(p)
				out[rel] = string(data)
			}
			return nil
		})
		return out
	}
	mirrored := func(rel string) bool {
		if strings.HasSuffix(rel, ".attrs") || strings.Contains(rel, "/.") || strings.HasPrefix(rel, ".") {
			return false
		}
		dir, name := path.Split(rel)
		return strings.HasPrefix(rel, "guides/") || (dir == "exported/" && strings.HasSuffix(name, ".json") && name != records.IDsMarker)
	}
	local, remote := files(cache, mirrored), files(bucketDir, mirrored)
	var diffs []string
	for k, v := range local {
		if rv, ok := remote[k]; !ok {
			diffs = append(diffs, k+" missing from the bucket")
		} else if rv != v && !(strings.HasPrefix(k, "exported/") && records.SameButStamps([]byte(v), []byte(rv))) {
			diffs = append(diffs, k+" differs")
		}
	}
	for k := range remote {
		if _, ok := local[k]; !ok {
			diffs = append(diffs, k+" only in the bucket")
		}
	}
	slices.Sort(diffs)
	return diffs
}

// TestWatchPrivateBucketKilled: watch --private file://… killed (SIGKILL)
// at random moments while uploads are exported, then started again on the
// same folder, ends with a private bucket that holds what its cache
// holds: every guide the killed processes exported and did not mirror is
// mirrored by the next start.
func TestWatchPrivateBucketKilled(t *testing.T) {
	bin := buildGuidepub(t)
	tr := newWatchTrees(t, "301-king-st-e", "https://hooks.example.com/ready")
	priv, work := t.TempDir(), t.TempDir()
	var stderr fixtures.SyncBuffer
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "watch", "--src", tr.src, "--out", tr.out, "--private", "file://"+priv, "--work-dir", work,
			"--debounce", "20ms", "--jobs", "1", "--quick=false")
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for i, folder := range []string{"ansi-us-house", "rue-saint-denis", "not-drafted"} {
		cmd := start()
		time.Sleep(time.Duration(200+rng.IntN(400)) * time.Millisecond)
		upload(t, tr.src, folder, sampleBundle(t, folder, "https://hooks.example.com/ready"))
		if i == 1 {
			os.RemoveAll(filepath.Join(tr.src, "301-king-st-e"))
		}
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
	}
	cmd := start()
	var diffs []string
	defer func() {
		if t.Failed() {
			t.Logf("the bucket against the cache: %v\nthe watchers' logs:\n%s", diffs, stderr.String())
		}
	}()
	// The last start exports again what the kills interrupted (each guide
	// compressed at the final settings, one job): a minute and a half on a
	// loaded machine.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		diffs = sameAsCache(t, filepath.Join(work, "private"), priv)
		_, err := os.Stat(filepath.Join(work, "private", "exported", "gLDN-NOTDRAFTED.json"))
		if len(diffs) == 0 && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the private bucket does not hold what the cache does")
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(priv, "exported", "gKT301KINGE1.json")); err == nil {
		t.Error("the removed guide's record is in the bucket")
	}
}

// TestHideWhileCacheLost: a view starts hiding its photos and floor plans
// while the exporter's cache is lost; the export that follows, on an empty
// folder with the records from the private bucket, leaves both buckets as
// a first export of the new bundles fills new ones: every object the hide
// withdraws is deleted, though no local file of it was there to remove.
func TestHideWhileCacheLost(t *testing.T) {
	st := publishtest.StartStore(t)
	buckets := map[string]*blob.Bucket{}
	for _, name := range []string{"pub", "priv", "pub-fresh", "priv-fresh"} {
		buckets[name] = publishtest.NewBucket(t, st.Endpoint, name)
	}
	src, root := fixtureSrc(t), t.TempDir()
	export := func(pub, priv, work string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "export", "--src", src, "--publish", s3URL(pub, st.Endpoint),
			"--private", s3URL(priv, st.Endpoint), "--work-dir", filepath.Join(root, work))
		if code != 0 {
			t.Fatalf("export into %s: exit %d\n%s\n%s", pub, code, stdout, stderr)
		}
	}
	export("pub", "priv", "before")
	guide := filepath.Join(src, "301-king-st-e", "guide.json")
	data, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	hidden := strings.Replace(string(data), `"hidden": [`, `"hidden": ["photos", "floorPlans", `, 1)
	if hidden == string(data) {
		t.Fatal("the fixture's second view hides nothing to add to")
	}
	if err := os.WriteFile(guide, []byte(hidden), 0o644); err != nil {
		t.Fatal(err)
	}
	before := bucketObjects(t, buckets["pub"], "vKT301B/")
	export("pub", "priv", "after") // an empty folder: the cache of "before" is lost
	export("pub-fresh", "priv-fresh", "fresh")
	if after := bucketObjects(t, buckets["pub"], "vKT301B/"); len(after) >= len(before) {
		t.Fatalf("the hide withdrew nothing: %d objects of the view before, %d after", len(before), len(after))
	}
	sameObjects(t, "public", bucketObjects(t, buckets["pub"], ""), bucketObjects(t, buckets["pub-fresh"], ""))
	sameObjects(t, "private guides/", bucketObjects(t, buckets["priv"], "guides/"), bucketObjects(t, buckets["priv-fresh"], "guides/"))
}
