package httpserver

import (
	"io"
	"net/http"
	"time"
)

// progressWriter moves the connection's write deadline to timeout from
// now before each WriteChunk of the response, so that the deadline bounds
// the time the client takes for each part, not for the whole response.
// It keeps the connection's ReadFrom (sendfile) for files.
type progressWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// extend moves the write deadline. A writer that cannot set one (a test
// recorder) is left as it is.
func (w *progressWriter) extend() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
}

// Write writes p in parts of WriteChunk, each with a fresh deadline.
func (w *progressWriter) Write(p []byte) (int, error) {
	n := 0
	for {
		part := p[:min(len(p), WriteChunk)]
		w.extend()
		m, err := w.ResponseWriter.Write(part)
		n += m
		p = p[m:]
		if err != nil || len(p) == 0 {
			return n, err
		}
	}
}

// ReadFrom copies r in parts of WriteChunk, each with a fresh deadline,
// through the connection's own ReadFrom when it has one: an *os.File, or
// an *io.LimitedReader of one (io.CopyN, http.ServeContent), still goes
// out with sendfile.
func (w *progressWriter) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(writerOnly{w}, r)
	}
	// One level of LimitedReader is what the connection can see through.
	src, limited := r.(*io.LimitedReader)
	var total int64
	for {
		part := &io.LimitedReader{R: r, N: WriteChunk}
		if limited {
			if src.N <= 0 {
				return total, nil
			}
			part = &io.LimitedReader{R: src.R, N: min(src.N, WriteChunk)}
		}
		want := part.N
		w.extend()
		n, err := rf.ReadFrom(part)
		total += n
		if limited {
			src.N -= n
		}
		if err != nil || n < want { // an error, or the end of r
			return total, err
		}
	}
}

// Flush sends what is buffered, within a fresh deadline.
func (w *progressWriter) Flush() {
	w.extend()
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *progressWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writerOnly hides ReadFrom, so that io.Copy uses Write.
type writerOnly struct{ io.Writer }
