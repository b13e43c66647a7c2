// Package varnishtest runs real Varnish for tests: varnishd in the
// foreground with a given VCL (the one `guidepub serve --print-config
// varnish` prints), on a free loopback port, stopped when the test ends.
// Where varnishd or its xkey vmod is missing, the test is skipped with
// how to install them (fixtures.Missing), or fails under
// GUIDEPUB_TEST_REQUIRE=1.
package varnishtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guidepub/guidepub/fixtures"
)

const install = "install the Debian packages varnish and varnish-modules (apt-get install varnish varnish-modules)"

// Varnishd returns the varnishd executable, or calls fixtures.Missing
// when it or the xkey vmod is not installed.
func Varnishd(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/varnishd"); err != nil {
			fixtures.Missing(t, "varnishd", install)
		}
		bin = "/usr/sbin/varnishd"
	}
	if vmods, _ := filepath.Glob("/usr/lib/*/varnish/vmods/libvmod_xkey.so"); len(vmods) == 0 {
		if vmods, _ = filepath.Glob("/usr/lib/varnish/vmods/libvmod_xkey.so"); len(vmods) == 0 {
			fixtures.Missing(t, "Varnish's xkey vmod", install)
		}
	}
	return bin
}

// JailArgs returns the arguments varnishd needs to run as the tests do:
// as root, no jail (the tests' folders are private to root).
func JailArgs() []string {
	if os.Geteuid() == 0 {
		return []string{"-j", "none"}
	}
	return nil
}

// Start runs varnishd with vcl and returns the address it listens on
// (HOST:PORT). It fails the test when varnishd exits or does not answer
// within 15 s, and stops it when the test ends (its output logged when
// the test failed).
func Start(t testing.TB, vcl []byte) string {
	t.Helper()
	bin := Varnishd(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "guidepub.vcl")
	if err := os.WriteFile(p, vcl, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	args := append([]string{"-F", "-n", filepath.Join(dir, "work"), "-a", addr, "-f", p, "-T", "none", "-s", "malloc,64m"}, JailArgs()...)
	cmd := exec.Command(bin, args...)
	var out fixtures.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start varnishd: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("varnishd:\n%s", LastLines(out.Bytes(), 30))
		}
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("varnishd exited:\n%s", LastLines(out.Bytes(), 30))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("varnishd does not answer on %s:\n%s", addr, LastLines(out.Bytes(), 30))
		}
	}
}

// LastLines returns the last n lines of out (varnishd prints the whole
// generated C before an error).
func LastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
