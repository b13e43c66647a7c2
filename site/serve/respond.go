package serve

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// respond answers a GET or HEAD for rep, whose bytes are body (rep.data
// when in memory), after the representation headers other than the
// Content-* ones are set. It evaluates If-Match, If-None-Match, Range and
// If-Range (RFC 9110 13.2.2 and 14): 412, 304, 206 for one satisfiable
// range, 416 for an unsatisfiable one, else 200. Several ranges in one
// request are answered with the whole representation, which RFC 9110
// allows. It returns the error of writing the body, which is only logged:
// the client is gone.
func respond(w http.ResponseWriter, r *http.Request, rep *representation, contentType []string, body io.ReadSeeker) error {
	h := w.Header()
	etag := rep.etag[0]
	if im := r.Header.Get("If-Match"); im != "" && !etagMatches(im, etag, true) {
		writeError(w, r, http.StatusPreconditionFailed, bodyPreconditionFailed)
		return nil
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag, false) {
		// A 304 carries the validators and caching headers only.
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h["Content-Type"] = contentType
	if rep.encoding != nil {
		h["Content-Encoding"] = rep.encoding
	}
	h["Accept-Ranges"] = hdrBytes
	start, length, status := int64(0), rep.size, http.StatusOK
	if rng := r.Header.Get("Range"); rng != "" && ifRangeHolds(r.Header.Get("If-Range"), etag) {
		s, n, ok, satisfiable := parseRange(rng, rep.size)
		switch {
		case ok && !satisfiable:
			h["Content-Range"] = []string{"bytes */" + strconv.FormatInt(rep.size, 10)}
			delete(h, "Content-Encoding")
			writeError(w, r, http.StatusRequestedRangeNotSatisfiable, bodyRangeNotSatisfiable)
			return nil
		case ok:
			start, length, status = s, n, http.StatusPartialContent
			h["Content-Range"] = []string{"bytes " + strconv.FormatInt(s, 10) + "-" + strconv.FormatInt(s+n-1, 10) + "/" + strconv.FormatInt(rep.size, 10)}
		}
	}
	if status == http.StatusOK {
		h["Content-Length"] = rep.length
	} else {
		h["Content-Length"] = []string{strconv.FormatInt(length, 10)}
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	if rep.data != nil {
		_, err := w.Write(rep.data[start : start+length])
		return err
	}
	if start != 0 { // a file is opened for the request, at its start
		if _, err := body.Seek(start, io.SeekStart); err != nil {
			return err
		}
	}
	// io.CopyN hands the *os.File to the connection's ReadFrom: sendfile.
	_, err := io.CopyN(w, body, length)
	return err
}

var (
	hdrBytes                = []string{"bytes"}
	bodyPreconditionFailed  = []byte(`{"code":"precondition_failed"}` + "\n")
	bodyRangeNotSatisfiable = []byte(`{"code":"range_not_satisfiable"}` + "\n")
)

// etagMatches reports whether the If-Match or If-None-Match field value
// list names etag, or is "*". strong selects strong comparison (If-Match);
// otherwise a W/ prefix is ignored (weak comparison, RFC 9110 8.8.3.2).
func etagMatches(list, etag string, strong bool) bool {
	list = strings.TrimSpace(list)
	if list == "*" {
		return true
	}
	for list != "" {
		var tag string
		tag, list, _ = strings.Cut(list, ",")
		tag = strings.TrimSpace(tag)
		if weak, ok := strings.CutPrefix(tag, "W/"); ok {
			if strong {
				continue
			}
			tag = weak
		}
		if tag == etag {
			return true
		}
	}
	return false
}

// ifRangeHolds reports whether a Range header may be honoured given the
// If-Range value v: always without one; only when v is exactly the strong
// current ETag otherwise. A date never holds: guidepub sends no
// Last-Modified.
func ifRangeHolds(v, etag string) bool {
	return v == "" || v == etag
}

// parseRange parses a Range header with one byte range against a
// representation of size bytes. ok is false for a header to ignore
// (another unit, bad syntax, several ranges); satisfiable is false when
// the range lies beyond the end.
func parseRange(v string, size int64) (start, length int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(v, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	if first == "" { // suffix range: the last n bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, true, false
		}
		n = min(n, size)
		return size - n, n, true, true
	}
	s, err := strconv.ParseInt(first, 10, 64)
	if err != nil || s < 0 {
		return 0, 0, false, false
	}
	e := size - 1
	if last != "" {
		if e, err = strconv.ParseInt(last, 10, 64); err != nil || e < s {
			return 0, 0, false, false
		}
		e = min(e, size-1)
	}
	if s >= size {
		return 0, 0, true, false
	}
	return s, e - s + 1, true, true
}
