package main

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestAddressInUse: serve, sidecar and dev on an address another process
// listens on fail with an error that says how to choose another address,
// and dev's names make run's ADDR, since make run starts it.
func TestAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	// An ephemeral port, under 65526: the error suggests the port 10 above.
	other := net.JoinHostPort("127.0.0.1", strconv.Itoa(taken.Addr().(*net.TCPAddr).Port+10))
	for _, tc := range []struct {
		args []string
		make bool
	}{
		{[]string{"serve", "--dir", t.TempDir()}, false},
		{[]string{"sidecar", "--private", t.TempDir()}, false},
		{[]string{"dev", "--work-dir", t.TempDir()}, true},
	} {
		code, out, errs := runCLI(t, append(tc.args, "--addr", addr)...)
		if code != exitFailure || !strings.Contains(errs, "address already in use") ||
			!strings.Contains(errs, "--addr "+other) || !strings.Contains(errs, "GUIDEPUB_ADDR") {
			t.Errorf("%s on a taken address: exit %d, want %d and how to choose another (--addr %s)\n%s%s", tc.args[0], code, exitFailure, other, out, errs)
		}
		if got := strings.Contains(errs, "make run ADDR="+other); got != tc.make {
			t.Errorf("%s: names make run ADDR: %v, want %v\n%s", tc.args[0], got, tc.make, errs)
		}
	}
}
