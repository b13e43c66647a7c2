package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/exporter/publish/publishtest"
	"github.com/guidepub/guidepub/sidecar"
)

// startTestSidecar runs a sidecar on private (a folder or a bucket URL)
// and store until the test ends, and returns its base URL.
func startTestSidecar(t *testing.T, private, store string, key []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := defaultSidecarConfig()
	cfg.Private, cfg.Store, cfg.SigningKeys = private, store, [][]byte{key}
	cfg.InstanceID = ln.Addr().String()
	go func() { done <- runSidecar(ctx, cfg, ln, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar on %s: %v", private, err)
		}
	})
	return "http://" + ln.Addr().String()
}

// answer is what a response says, its Date aside; Last-Modified aside too
// when lastModified is false (a bucket's objects have their upload time).
func answer(t *testing.T, method, url string, header http.Header, lastModified bool) string {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && strings.Contains(url, "/events/") {
		var v map[string]any
		if json.Unmarshal(body, &v) == nil {
			delete(v, "authtoken") // issued now, by each sidecar
			body, _ = json.Marshal(v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", resp.StatusCode)
	for _, h := range []string{"Content-Type", "Content-Length", "Content-Range", "ETag", "Cache-Control", "Accept-Ranges", "Last-Modified"} {
		if h == "Last-Modified" && !lastModified {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", h, resp.Header.Get(h))
	}
	b.Write(body)
	return b.String()
}

// TestSidecarFromBucket: two sidecars whose private tree is a bucket, each
// started in an empty folder, answer every Portal API call (the event
// object whole; the test, dispatch and deliveries calls by status) and
// private document of the fixtures as a sidecar on the local private tree
// does (status, body, ETag, ranges, conditional requests); a private
// document removed from the bucket is not served at the next request.
func TestSidecarFromBucket(t *testing.T) {
	st := publishtest.StartStore(t)
	b := publishtest.NewBucket(t, st.Endpoint, "private")
	privURL := s3URL("private", st.Endpoint)
	src, work := fixtureSrc(t), t.TempDir()
	if code, out, errs := runCLI(t, "export", "--src", src, "--out", filepath.Join(work, "out"), "--private", privURL, "--work-dir", work); code != 0 {
		t.Fatalf("export: %d\n%s\n%s", code, out, errs)
	}
	storeDir := t.TempDir()
	key := []byte("0123456789abcdef0123456789abcdef")
	store := filepath.Join(storeDir, defaultStoreFile)
	folder := startTestSidecar(t, filepath.Join(work, "private"), store, key)
	var buckets []string
	for range 2 {
		t.Chdir(t.TempDir()) // an empty folder: nothing local is read
		buckets = append(buckets, startTestSidecar(t, privURL, store, key))
	}

	docs := 0
	for _, guide := range []struct{ id, owner string }{{"gKT301KINGE1", "user-1001"}, {"gUS123MAPLE", "user-2002"}, {"gMTL4321DENIS", "user-3003"}, {"gLDN-NOTDRAFTED", "user-1001"}, {"gNOPE", "user-1001"}} {
		cred := createToken(t, storeDir, guide.owner, "guide.events")
		h := http.Header{sidecar.HeaderAppID: {cred.AppID}, sidecar.HeaderAppToken: {cred.Token}}
		path := "/api/v1/guides/" + guide.id + "/events/ready/object"
		want := answer(t, "GET", folder+path, h, true)
		for _, base := range buckets {
			if got := answer(t, "GET", base+path, h, true); got != want {
				t.Errorf("%s from the bucket:\n%s\nfrom the folder:\n%s", path, got, want)
			}
		}
		// The other calls read the same guide (dispatch) or the store
		// alone; their bodies hold delivery ids and attempts of their own.
		for _, c := range []struct{ method, path string }{
			{"POST", "/api/v1/integrations/test"},
			{"POST", "/api/v1/guides/" + guide.id + "/events/ready/dispatch"},
			{"GET", "/api/v1/guides/" + guide.id + "/events/deliveries"},
		} {
			status := func(base string) string {
				return strings.SplitN(answer(t, c.method, base+c.path, h, false), "\n", 2)[0]
			}
			want := status(folder)
			for _, base := range buckets {
				if got := status(base); got != want {
					t.Errorf("%s %s: %s from the bucket, %s from the folder", c.method, c.path, got, want)
				}
			}
		}
		var ev map[string]any
		resp := answer(t, "GET", folder+path, h, true)
		if !strings.HasPrefix(resp, "200") {
			continue
		}
		getEvent(t, folder+path, h, &ev)
		raw, _ := json.Marshal(ev)
		token, _ := ev["authtoken"].(string)
		for _, m := range privateURL.FindAllStringSubmatch(string(raw), -1) {
			p := m[1]
			docs++
			p += "?accessToken=" + token
			etag := strings.TrimSpace(strings.TrimPrefix(strings.Split(answer(t, "HEAD", folder+p, nil, false), "\n")[4], "ETag:"))
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("%s: no ETag where the answer's fifth line should hold it: %q", p, etag)
			}
			for _, c := range []struct {
				method string
				header http.Header
			}{
				{"GET", nil}, {"HEAD", nil},
				{"GET", http.Header{"Range": {"bytes=10-99"}}},
				{"GET", http.Header{"Range": {"bytes=-7"}}},
				{"GET", http.Header{"If-None-Match": {etag}}},
				{"GET", http.Header{"If-Range": {etag}, "Range": {"bytes=3-5"}}},
			} {
				want := answer(t, c.method, folder+p, c.header, false)
				for _, base := range buckets {
					if got := answer(t, c.method, base+p, c.header, false); got != want {
						t.Errorf("%s %s %v from the bucket:\n%.300s\nfrom the folder:\n%.300s", c.method, p, c.header, got, want)
					}
				}
			}
			bad := strings.Replace(p, "accessToken=", "accessToken=x", 1)
			if got := answer(t, "GET", buckets[0]+bad, nil, false); !strings.HasPrefix(got, "401") {
				t.Errorf("a wrong token: %.80s", got)
			}
		}
	}
	if docs == 0 {
		t.Fatal("no private document among the fixtures' events")
	}
	t.Logf("%d private documents answered alike, 6 requests each", docs)

	// A document removed from the bucket is gone at the next request.
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err != nil {
			t.Fatal("no private document in the bucket")
		}
		if !strings.Contains(o.Key, "/doc/") {
			continue
		}
		parts := strings.SplitN(o.Key, "/", 4) // guides/<id>/doc/<rel>
		guideID, rel := parts[1], parts[3]
		cred := createToken(t, storeDir, ownerOf(t, src, guideID), "guide.events")
		var ev struct {
			AuthToken string `json:"authtoken"`
		}
		getEvent(t, buckets[0]+"/api/v1/guides/"+guideID+"/events/ready/object",
			http.Header{sidecar.HeaderAppID: {cred.AppID}, sidecar.HeaderAppToken: {cred.Token}}, &ev)
		url := buckets[1] + "/private/" + guideID + "/" + rel + "?accessToken=" + ev.AuthToken
		if got := answer(t, "GET", url, nil, false); !strings.HasPrefix(got, "200") {
			t.Fatalf("before the removal: %.80s", got)
		}
		if err := b.Delete(context.Background(), o.Key); err != nil {
			t.Fatal(err)
		}
		if got := answer(t, "GET", url, nil, false); !strings.HasPrefix(got, "404") {
			t.Errorf("after the removal: %.80s", got)
		}
		break
	}
}

// privateURL finds the path of a private document's URL in an event.
var privateURL = regexp.MustCompile(`"https?://[^"/]+(/private/[^"?]+)"`)

// getEvent decodes the event object at url into v.
func getEvent(t *testing.T, url string, h http.Header, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v", url, resp.StatusCode, err)
	}
}

// ownerOf returns the ownerId of the fixture whose guide id is guideID.
func ownerOf(t *testing.T, src, guideID string) string {
	t.Helper()
	des, _ := os.ReadDir(src)
	for _, de := range des {
		data, _ := os.ReadFile(filepath.Join(src, de.Name(), "guide.json"))
		var g struct{ GuideID, OwnerID string }
		if json.Unmarshal(data, &g) == nil && g.GuideID == guideID {
			return g.OwnerID
		}
	}
	t.Fatalf("no fixture of guide %s", guideID)
	return ""
}
