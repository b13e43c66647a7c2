package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	for _, addr := range []string{"127.0.0.1:" + port, ":" + port, "0.0.0.0:" + port} {
		if code, out, errOut := runCLI(t, "healthcheck", "--addr", addr); code != 0 {
			t.Errorf("healthcheck --addr %s: exit %d\n%s%s", addr, code, out, errOut)
		}
	}
	t.Setenv("GUIDEPUB_ADDR", ":"+port)
	if code, _, _ := runCLI(t, "healthcheck"); code != 0 {
		t.Errorf("healthcheck with GUIDEPUB_ADDR: exit %d", code)
	}
	status = http.StatusServiceUnavailable
	if code, _, errOut := runCLI(t, "healthcheck"); code != 1 || !strings.Contains(errOut, "503") {
		t.Errorf("unhealthy server: exit %d (%s), want 1", code, errOut)
	}
	srv.Close()
	if code, _, _ := runCLI(t, "healthcheck"); code != 1 {
		t.Errorf("no server: exit %d, want 1", code)
	}
	if code, _, _ := runCLI(t, "healthcheck", "--addr", "no-port"); code != 2 {
		t.Errorf("bad --addr: exit %d, want 2", code)
	}
}
