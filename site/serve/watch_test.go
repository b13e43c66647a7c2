package serve

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWatchAfterFolderRename renames a served folder and checks that later
// changes inside it, in its top folder and in a sub-folder, are served.
func TestWatchAfterFolderRename(t *testing.T) {
	fc := fsCases(t, newTestTree())[0]
	_, hs, client := newTestServer(t, fc, testConfig())
	get := func(path string) string {
		_, b := do(t, client, "GET", hs.URL+path, nil)
		return string(b)
	}
	if err := os.Rename(filepath.Join(fc.root, "v1"), filepath.Join(fc.root, "v9")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the renamed view", func() bool { return get("/v9/data/status") == `{"status":"ready"}` })
	// A folder created right in the renamed folder, whose own watch
	// fsnotify drops when the folder's move event arrives.
	writeAtomic(t, fc.root, "v9/extra/data/status", []byte(`{"status":"extra"}`))
	waitFor(t, "a new folder in the renamed folder", func() bool { return get("/v9/extra/data/status") == `{"status":"extra"}` })
	for _, status := range []string{`{"status":"locked"}`, `{"status":"ready"}`} {
		writeAtomic(t, fc.root, "v9/data/status", []byte(status))
		waitFor(t, "a change after the rename", func() bool { return get("/v9/data/status") == status })
	}
	writeAtomic(t, fc.root, "v9/reso/autofill", []byte(`{"value":[]}`))
	waitFor(t, "a change in a sub-folder after the rename", func() bool { return get("/v9/reso/autofill") == `{"value":[]}` })
}
