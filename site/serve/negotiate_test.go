package serve

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

func TestParseQValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int16
		ok   bool
	}{
		{"1", 1000, true}, {"1.", 1000, true}, {"1.000", 1000, true}, {"0", 0, true}, {"0.5", 500, true},
		{"0.05", 50, true}, {"0.001", 1, true}, {"0.999", 999, true},
		{"1.5", 0, false}, {"1.001", 0, false}, {"2", 0, false}, {"0.0001", 0, false}, {"-0", 0, false},
		{"", 0, false}, {".5", 0, false}, {"0,5", 0, false}, {"0.5x", 0, false}, {"abc", 0, false},
	} {
		got, ok := parseQValue(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseQValue(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseRange(t *testing.T) {
	const size = 100
	for _, tc := range []struct {
		in              string
		start, length   int64
		ok, satisfiable bool
	}{
		{"bytes=0-9", 0, 10, true, true},
		{"bytes=90-", 90, 10, true, true},
		{"bytes=90-200", 90, 10, true, true},
		{"bytes=-10", 90, 10, true, true},
		{"bytes=-200", 0, 100, true, true},
		{"bytes=99-99", 99, 1, true, true},
		{"bytes=100-", 0, 0, true, false},
		{"bytes=-0", 0, 0, true, false},
		{"bytes=5-4", 0, 0, false, false},
		{"bytes=0-1,5-6", 0, 0, false, false},
		{"items=0-1", 0, 0, false, false},
		{"bytes=a-b", 0, 0, false, false},
		{"bytes=-", 0, 0, false, false},
		{"bytes=--1", 0, 0, false, false},
		{"bytes=1", 0, 0, false, false},
		{"bytes=99999999999999999999-", 0, 0, false, false},
	} {
		s, n, ok, sat := parseRange(tc.in, size)
		if s != tc.start || n != tc.length || ok != tc.ok || sat != tc.satisfiable {
			t.Errorf("parseRange(%q) = %d, %d, %v, %v; want %d, %d, %v, %v", tc.in, s, n, ok, sat, tc.start, tc.length, tc.ok, tc.satisfiable)
		}
	}
}

func TestETagMatches(t *testing.T) {
	const etag = `"abc"`
	for _, tc := range []struct {
		list   string
		strong bool
		want   bool
	}{
		{`"abc"`, false, true}, {`W/"abc"`, false, true}, {`W/"abc"`, true, false}, {`"abc"`, true, true},
		{` "x" , "abc" `, false, true}, {`*`, false, true}, {`*`, true, true}, {`abc`, false, false},
		{`"ab"`, false, false}, {``, false, false}, {`,,`, false, false},
	} {
		if got := etagMatches(tc.list, etag, tc.strong); got != tc.want {
			t.Errorf("etagMatches(%q, strong=%v) = %v", tc.list, tc.strong, got)
		}
	}
}

// FuzzServeHTTP sends arbitrary paths and headers: the server must never
// panic, must answer with one of its statuses, and a 200 must be a file
// of the tree.
func FuzzServeHTTP(f *testing.F) {
	root := osTree(f, newTestTree())
	if _, err := New(nil, root, Config{}); err == nil {
		f.Fatal("New with no file system: no error")
	}
	s, err := New(afero.NewOsFs(), root, testConfig(noWatch, smallFileLimit(1024)))
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	for _, seed := range [][4]string{
		{"/v1/data/summary", "br", "", ""},
		{"/v1/doc/photo.jpg", "*;q=0.5", `W/"x"`, "bytes=0-1"},
		{"/%2e%2e/secret", "identity;q=0", "*", "bytes=-5"},
		{"/v1/data/status.br", "gzip;q=0.5;q=1", "", "bytes=5-1"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, path, accept, inm, rng string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.RawPath = ""
		req.URL.Path = path
		if strings.Contains(path, "%") {
			req.URL.RawPath = path
		}
		req.Header.Set("Accept-Encoding", accept)
		req.Header.Set("If-None-Match", inm)
		req.Header.Set("Range", rng)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusPartialContent, http.StatusNotModified, http.StatusNotFound,
			http.StatusNotAcceptable, http.StatusRequestedRangeNotSatisfiable:
		default:
			t.Fatalf("status %d", rec.Code)
		}
		if rec.Code == http.StatusOK && rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
			t.Fatalf("Content-Length %s for %d bytes", rec.Header().Get("Content-Length"), rec.Body.Len())
		}
	})
}
