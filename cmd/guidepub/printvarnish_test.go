package main

import (
	"strings"
	"testing"
)

// TestPrintVarnishConfig: serve --print-config varnish needs no --dir,
// takes its backend from --addr, its TTL from --edge-ttl (GUIDEPUB_EDGE_TTL)
// and its ACL from --purge-acl, and refuses an ACL entry that is neither
// an address nor a range.
func TestPrintVarnishConfig(t *testing.T) {
	t.Setenv("GUIDEPUB_EDGE_TTL", "2h")
	code, vcl, errs := runCLI(t, "serve", "--addr", "127.0.0.1:9080", "--print-config", "varnish", "--purge-acl", "10.0.0.0/8,::1", "--sidecar", "127.0.0.1:9081")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{`.port = "9080";`, `.port = "9081";`, `"10.0.0.0"/8;`, `"::1";`, "set beresp.ttl = 7200s;"} {
		if !strings.Contains(vcl, want) {
			t.Errorf("the VCL has no %q", want)
		}
	}
	if strings.Contains(vcl, `"localhost";`) {
		t.Error("--purge-acl did not replace the default ACL")
	}
	if code, _, errs := runCLI(t, "serve", "--addr", "127.0.0.1:9080", "--print-config", "varnish", "--purge-acl", "example.com"); code != exitUsage || !strings.Contains(errs, "example.com") {
		t.Errorf("--purge-acl example.com: exit %d, %q", code, errs)
	}
}
