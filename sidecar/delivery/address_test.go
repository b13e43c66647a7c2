package delivery

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		ip   string
		want string // "" = public
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"2606:4700:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "special-purpose (0.0.0.0/8)"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.1.1.1", "multicast"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"100.64.0.1", "special-purpose (100.64.0.0/10)"},
		{"100.127.255.255", "special-purpose (100.64.0.0/10)"},
		{"100.128.0.1", ""},
		{"192.0.2.10", "special-purpose (192.0.2.0/24)"},
		{"198.51.100.1", "special-purpose (198.51.100.0/24)"},
		{"203.0.113.200", "special-purpose (203.0.113.0/24)"},
		{"2001:db8::1", "special-purpose (2001:db8::/32)"},
		{"198.18.0.1", "special-purpose (198.18.0.0/15)"},
		{"240.0.0.1", "special-purpose (240.0.0.0/4)"},
		{"255.255.255.255", "special-purpose (240.0.0.0/4)"},
		{"64:ff9b::7f00:1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"64:ff9b::808:808", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"2002:c0a8:0101::1", "special-purpose (2002::/16)"},
		{"2002:0808:0808::1", "special-purpose (2002::/16)"},
		{"fec0::1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		// Found in review: dialled before the registries decided.
		{"::127.0.0.1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"::10.0.0.1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"::169.254.169.254", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"::2", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"::ffff:0:7f00:1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"3fff::1", "special-purpose (3fff::/20)"},
		{"5f00::1", "special-purpose (outside the IPv6 global unicast range 2000::/3)"},
		{"192.88.99.1", "special-purpose (192.88.99.0/24)"},
	}
	for _, tc := range cases {
		t.Run(tc.ip, func(t *testing.T) {
			if got := Classify(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Classify(%s) = %q, want %q", tc.ip, got, tc.want)
			}
		})
	}
	if Classify(netip.Addr{}) == "" {
		t.Error("the zero Addr counts as public")
	}
}

func TestRefusePrivateControl(t *testing.T) {
	for addr, wantErr := range map[string]bool{
		"127.0.0.1:80": true, "[::1]:443": true, "10.0.0.1:8080": true, "8.8.8.8:443": false,
		"[2606:4700:4700::1111]:443": false, "example.com:80": true,
		// The forms an outside review saw dialled: refused at connect time.
		"[::127.0.0.1]:80": true, "[::10.0.0.1]:80": true, "[::169.254.169.254]:80": true, "[::2]:80": true,
		"[::ffff:0:7f00:1]:80": true, "[3fff::1]:443": true, "[5f00::1]:443": true, "192.88.99.1:80": true,
	} {
		err := refusePrivate("tcp", addr, nil)
		if (err != nil) != wantErr {
			t.Errorf("refusePrivate(%s) = %v, want error %v", addr, err, wantErr)
		}
	}
}

func TestPrivateTargetsRefused(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			st := openStore(t, b.dsn(t))
			rc := newReceiver(t, status(200))
			_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
			cfg := testConfig()
			cfg.AllowPrivateTargets = false
			q := startQueue(t, st, cfg)
			cases := []struct {
				url, wantErr string
			}{
				{rc.srv.URL + "/hook", "127.0.0.1: loopback address"},
				{"http://localhost:" + port + "/hook", "loopback address"},
				{"ftp://example.com/hook", `scheme "ftp" is not http or https`},
				{"http:///nohost", "no host"},
			}
			for i, tc := range cases {
				d := enqueueOne(t, q, message("g-private", tc.url, i))
				got := waitFinal(t, q, "g-private", d.ID)
				if got.State != StateDropped || len(got.Attempts) != 1 || !strings.Contains(got.Attempts[0].Error, tc.wantErr) {
					t.Errorf("%s: state %s attempts %+v, want dropped once with %q", tc.url, got.State, got.Attempts, tc.wantErr)
				}
			}
			if n := len(rc.requests()); n != 0 {
				t.Errorf("a refused target was reached %d times", n)
			}

			// The same receiver is reached once private targets are allowed
			// (the refusing queue is stopped: queues on one database share
			// the work).
			if err := q.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			cfg.AllowPrivateTargets = true
			q2 := startQueue(t, st, cfg)
			d := enqueueOne(t, q2, message("g-allowed", rc.srv.URL, 1))
			if got := waitFinal(t, q2, "g-allowed", d.ID); got.State != StateDelivered {
				t.Errorf("with AllowPrivateTargets: %s %+v", got.State, got.Attempts)
			}
			if n := len(rc.requests()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@example.com/hook?token=abc#x": "https://example.com/hook",
		"http://example.com":                           "http://example.com",
		"http://[::1]:80/a b":                          "http://[::1]:80/a%20b",
		"http://bad host/":                             "(invalid url)",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
