package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/afero"
	"github.com/urfave/cli/v2"

	"github.com/guidepub/guidepub/site"
	"github.com/guidepub/guidepub/site/serve"
)

// flagDefault returns the default value of the flag name of the command at
// path (a command and its subcommands).
func flagDefault(t *testing.T, name string, path ...string) string {
	t.Helper()
	cmds := newApp(nil, nil).Commands
	var cmd *cli.Command
	for _, p := range path {
		cmd = nil
		for _, c := range cmds {
			if c.Name == p {
				cmd = c
			}
		}
		if cmd == nil {
			t.Fatalf("no command %v", path)
		}
		cmds = cmd.Subcommands
	}
	for _, f := range cmd.Flags {
		if f.Names()[0] == name {
			return f.(cli.DocGenerationFlag).GetValue()
		}
	}
	t.Fatalf("%v has no --%s", path, name)
	return ""
}

// TestHealthcheckDefaultIsDevs: healthcheck without --addr asks where dev
// (make run) listens without --addr, and its help names the sidecar's
// default address, the other one a user may have started.
func TestHealthcheckDefaultIsDevs(t *testing.T) {
	hc, dev, side := flagDefault(t, "addr", "healthcheck"), flagDefault(t, "addr", "dev"), flagDefault(t, "addr", "sidecar")
	if hc != dev {
		t.Errorf("healthcheck asks %s by default, dev listens on %s", hc, dev)
	}
	_, help, _ := runCLI(t, "healthcheck", "--help")
	if !strings.Contains(help, "--addr "+strings.Trim(side, `"`)) {
		t.Errorf("healthcheck --help does not say how to ask a sidecar on its default address, %s:\n%s", side, help)
	}
}

// TestSidecarHelpNamesItsRoutes: sidecar --help names every route a web
// server in front sends to it.
func TestSidecarHelpNamesItsRoutes(t *testing.T) {
	_, help, _ := runCLI(t, "sidecar", "--help")
	for _, r := range append([]string{"/healthz", "/readyz", "/metrics"}, site.SidecarRoutes...) {
		if !strings.Contains(help, r) {
			t.Errorf("sidecar --help does not name %s:\n%s", r, help)
		}
	}
}

// TestServeHelp404: an unknown path answers as serve --help says: the
// HTML page to a browser, JSON to anything else.
func TestServeHelp404(t *testing.T) {
	_, help, _ := runCLI(t, "serve", "--help")
	help = strings.Join(strings.Fields(help), " ")
	if !strings.Contains(help, "the HTML 404 page for a browser") || !strings.Contains(help, "a JSON body for anything else") {
		t.Errorf("serve --help does not say what an unknown path gets:\n%s", help)
	}
	dir := t.TempDir()
	srv, err := serve.New(afero.NewOsFs(), dir, serve.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for accept, want := range map[string]string{
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": "text/html",
		"*/*":              "application/json",
		"application/json": "application/json",
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/vNOSUCH1/data/status", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 404 || !strings.HasPrefix(ct, want) {
			t.Errorf("Accept %s: %d %s, want 404 %s", accept, resp.StatusCode, ct, want)
		}
	}
}
