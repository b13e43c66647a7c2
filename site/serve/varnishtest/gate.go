package varnishtest

import (
	"io"
	"net/http"
	"sync/atomic"
)

// PurgeGate stands between guidepub and Varnish's purge port, as an
// outage of the edge would: while Down is set it answers every request
// 503; otherwise it passes each one on to Edge (a base URL). Tried counts
// the requests it was sent, down or not.
type PurgeGate struct {
	Edge  string
	Down  atomic.Bool
	Tried atomic.Int64
}

func (g *PurgeGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.Tried.Add(1)
	if g.Down.Load() {
		http.Error(w, "edge down", http.StatusServiceUnavailable)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, g.Edge+r.URL.Path, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
