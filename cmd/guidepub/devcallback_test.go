package main

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/guidepub/guidepub/fixtures"
)

// TestDevCallbackWithCurl: dev's redirect URI page, fetched with curl as
// the walk-through with curl does, shows the exchange and Portal API
// commands as they are, each on a line of its own to paste into a shell
// (the HTML page escapes their quotes); a browser still gets the page.
func TestDevCallbackWithCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		fixtures.Missing(t, "curl", "apt-get install curl")
	}
	cb := &devCallback{}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	try := newOAuthTry(srv.URL, "gpc_0123456789abcdef", "gpcs_secret", srv.URL+devCallbackPath, devScopes)
	cb.add(try)
	u := srv.URL + devCallbackPath + "?code=ory_ac_abc.def&state=" + try.state

	out, err := exec.Command("curl", "-s", u).Output()
	if err != nil {
		t.Fatalf("curl %s: %v", u, err)
	}
	lines := strings.Split(string(out), "\n")
	for _, want := range []string{try.exchangeCommand("ory_ac_abc.def"), try.apiCommand()} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("curl gets no line with the command, as it is:\n%s\nin:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "&#") || strings.Contains(string(out), "<pre>") {
		t.Errorf("curl gets HTML:\n%s", out)
	}

	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("a browser gets %s, want the HTML page", ct)
	}
}
